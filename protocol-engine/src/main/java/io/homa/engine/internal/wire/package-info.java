/**
 * Homa wire format: one flyweight per packet header, big-endian, byte layout exactly as the
 * figures of draft-ousterhout-tsvwg-homa (which match the Linux implementation's
 * {@code homa_wire.h}). Each packet is the payload of one UDP datagram. Internal: the engine and the
 * transport read and write packets through these; applications see packets only as
 * {@link io.homa.engine.wire.PacketType}s in the engine's counters.
 */
package io.homa.engine.internal.wire;
