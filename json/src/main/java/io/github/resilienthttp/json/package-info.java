/**
 * Typed JSON for operations with Jackson 2: {@link io.github.resilienthttp.json.JsonCodec} turns values
 * into request bodies and final responses into values (non-2xx statuses become
 * {@link io.github.resilienthttp.json.HttpStatusException} with RFC 9457
 * {@link io.github.resilienthttp.json.ProblemDetails}), reading every body with a size limit.
 *
 * <p>Artifact {@code io.github.resilienthttp:resilient-http-json}, module
 * {@code io.github.resilienthttp.json}. It depends on {@code com.fasterxml.jackson.core:jackson-databind}
 * (2.x); the core artifact has no JSON type.
 */
package io.github.resilienthttp.json;
