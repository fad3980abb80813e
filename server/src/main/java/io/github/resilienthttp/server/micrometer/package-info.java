/** The guard's events as Micrometer counters. */
package io.github.resilienthttp.server.micrometer;
