/**
 * Typed JSON for operations with Jackson: {@link io.github.resilienthttp.json.JsonCodec} turns values
 * into request bodies and final responses into values (non-2xx statuses become
 * {@link io.github.resilienthttp.HttpStatusException} with RFC 9457
 * {@link io.github.resilienthttp.json.ProblemDetails}), reading every body with a size limit.
 *
 * <p>Requires {@code com.fasterxml.jackson.core:jackson-databind} on the class path: it is an optional
 * dependency of the SDK, which the application adds itself.
 */
package io.github.resilienthttp.json;
