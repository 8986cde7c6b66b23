/**
 * Homa wire format: one flyweight per packet header, big-endian, byte layout exactly as the
 * figures of draft-ousterhout-tsvwg-homa (which match the Linux implementation's
 * {@code homa_wire.h}). Each packet is the payload of one UDP datagram.
 */
package io.homa.engine.wire;
