/** Benchmarks: JMH microbenchmarks ({@code io.homa.bench.jmh}) and the side-by-side load generator. */
package io.homa.bench;
