package io.github.resilienthttp.examples;

/**
 * The outcome of {@link PaymentsDemo#run(int, long)}: the same operations, against the same faults,
 * through Resilient HTTP and through a naive retry loop.
 *
 * @param operations payments each client was asked to create
 * @param seed the seed of the server's random faults
 * @param resilient the Resilient HTTP row
 * @param naive the naive retry row
 */
public record DemoResult(int operations, long seed, ClientRun resilient, ClientRun naive) {}
