package io.homa.engine;

import java.util.Objects;

/**
 * What {@link HomaEngine#sendRequest} and {@link HomaEngine#sendResponse} send: a message as its
 * bytes in order across one or more arrays ({@link MessageBytes}), so that a framing header and a
 * payload, or a received message's chunks ({@link HomaEvent.RequestReceived#parts()}), go as one
 * message without being joined into one array. Immutable and free of state: one value may be sent
 * any number of times.
 *
 * @param parts the message's bytes, in order; together 1..{@link EngineConfig#maxMessageBytes()}
 *     bytes when sent (a part may be empty). The engine keeps the array and its parts until the
 *     message is acknowledged: do not modify them after sending
 */
public record SendOptions(byte[][] parts) {
    /**
     * @throws NullPointerException if {@code parts} or one of them is null
     */
    public SendOptions {
        Objects.requireNonNull(parts, "parts");
        for (byte[] part : parts) {
            Objects.requireNonNull(part, "a part of the message is null");
        }
    }

    /**
     * A message of the given parts, in order: {@code of(message)} for one array,
     * {@code of(head, body)} for a header and a payload, {@code of(parts)} for an array of parts
     * (used as it is, not copied).
     *
     * @param parts the message's bytes, in order
     * @return the value to pass to {@link HomaEngine#sendRequest} or {@link HomaEngine#sendResponse}
     * @throws NullPointerException if {@code parts} or one of them is null
     */
    public static SendOptions of(byte[]... parts) {
        return new SendOptions(parts);
    }

    /**
     * The parts, checked to hold 1..{@code maxMessageBytes} bytes in all.
     *
     * @throws IllegalArgumentException if they hold fewer or more
     */
    byte[][] partsWithin(int maxMessageBytes, String what) {
        long lengthBytes = lengthBytes();
        if (lengthBytes < 1 || lengthBytes > maxMessageBytes) {
            throw new IllegalArgumentException(what + " length must be between 1 and "
                    + maxMessageBytes + " bytes (max-message-size), was " + lengthBytes);
        }
        return parts;
    }

    /** The message's length in bytes, the sum of its parts' lengths. */
    public long lengthBytes() {
        return MessageBytes.lengthBytes(parts);
    }
}
