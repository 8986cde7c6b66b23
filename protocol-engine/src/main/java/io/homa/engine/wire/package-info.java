/**
 * The packet types of draft-ousterhout-tsvwg-homa (and this implementation's extensions), as the
 * engine's counters name them. The header codecs themselves are internal
 * ({@code io.homa.engine.internal.wire}).
 */
package io.homa.engine.wire;
