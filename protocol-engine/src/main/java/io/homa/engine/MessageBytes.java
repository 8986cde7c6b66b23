package io.homa.engine;

/**
 * A message held as its bytes in order across several arrays ("parts"), the shape in which the
 * engine takes messages to send ({@link SendOptions}, for {@link HomaEngine#sendRequest})
 * and hands received ones out ({@link HomaEvent.RequestReceived#parts()}): a framing header and a
 * payload, or a long message in the chunks it was reassembled in, need not be joined into one
 * array (a copy, and for a message over half a G1 region a humongous allocation).
 */
public final class MessageBytes {
    private MessageBytes() {}

    /**
     * The message's length in bytes: the sum of the parts' lengths (empty parts count 0).
     *
     * @throws NullPointerException if {@code parts} or one of them is null
     */
    public static long lengthBytes(byte[][] parts) {
        long length = 0;
        for (byte[] part : parts) {
            length += part.length;
        }
        return length;
    }

    /**
     * The message as one array: its part itself when there is one (not a copy), or a new array
     * holding every part in order.
     *
     * @throws NullPointerException if {@code parts} or one of them is null
     * @throws IllegalArgumentException if the message is longer than an array can be
     */
    public static byte[] join(byte[][] parts) {
        long length = lengthBytes(parts);
        if (length > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a message of " + length + " bytes does not fit one array");
        }
        if (parts.length == 1) {
            return parts[0];
        }
        byte[] message = new byte[(int) length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, message, at, part.length);
            at += part.length;
        }
        return message;
    }
}
