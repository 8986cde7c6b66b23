package io.homa.engine;

/** Receiver's state of one message: bytes reassembled by offset, and what has been granted. */
final class InboundMessage {
    final int lengthBytes;
    final byte[] data;
    final RangeSet received = new RangeSet();
    /** Bytes below this offset are authorised: unscheduled (from DATA's incoming) or granted. */
    int grantedOffset;

    InboundMessage(int lengthBytes, int incomingBytes) {
        this.lengthBytes = lengthBytes;
        this.data = new byte[lengthBytes];
        this.grantedOffset = Math.min(lengthBytes, Math.max(0, incomingBytes));
    }

    boolean complete() {
        return received.coveredBytes() == lengthBytes;
    }

    long receivedBytes() {
        return received.coveredBytes();
    }
}
