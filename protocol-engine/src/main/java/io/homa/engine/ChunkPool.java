package io.homa.engine;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Full-size chunks ({@value InboundMessage#CHUNK_BYTES} bytes) of delivered messages, given back
 * by whoever consumed them, for the engine to reassemble later messages in.
 *
 * <p>Why: a received message is copied from its packets into chunks. A new array is zeroed by
 * the JVM first, and fresh heap memory is not in any cache, so at high rates the zeroing and the
 * cache misses cost as much as the copy itself. A chunk given back is reused while it is still
 * warm and is not zeroed again; its old bytes are never seen, because a message is delivered only
 * once every byte of it has been written ({@link InboundMessage#complete()}) and bytes are compared
 * only where they arrived ({@link InboundMessage#agreesWithReceived}).
 *
 * <p>Giving back is optional: a chunk never given back is collected as garbage. A chunk given back
 * must not be read or written by its giver afterwards: the next message to arrive overwrites it.
 * The pool keeps at most {@code capacity} chunks; more are dropped. Thread-safe: the engine's
 * thread takes, any thread gives.
 */
public final class ChunkPool {
    /** Length of every chunk the pool holds, bytes. */
    public static final int CHUNK_BYTES = InboundMessage.CHUNK_BYTES;

    private final ReentrantLock lock = new ReentrantLock();
    private final byte[][] chunks;
    private int size;

    /**
     * @param capacity chunks kept at most, 0.. ({@code capacity} x {@value #CHUNK_BYTES} bytes of heap)
     * @throws IllegalArgumentException if {@code capacity} is negative
     */
    public ChunkPool(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be at least 0, was " + capacity);
        }
        this.chunks = new byte[capacity][];
    }

    /** A chunk of {@value #CHUNK_BYTES} bytes, given back earlier (its bytes are stale), or a new one. */
    byte[] take() {
        lock.lock();
        try {
            if (size > 0) {
                byte[] chunk = chunks[--size];
                chunks[size] = null;
                return chunk;
            }
        } finally {
            lock.unlock();
        }
        return new byte[CHUNK_BYTES];
    }

    /**
     * Gives a delivered message's chunk back; the caller must not touch it afterwards. Arrays of
     * any other length are ignored (a message's last chunk is usually shorter).
     *
     * @return whether the pool kept it (false: another length, or the pool is full)
     */
    public boolean give(byte[] chunk) {
        if (chunk.length != CHUNK_BYTES) {
            return false;
        }
        lock.lock();
        try {
            if (size == chunks.length) {
                return false;
            }
            chunks[size++] = chunk;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Chunks held now. */
    public int size() {
        lock.lock();
        try {
            return size;
        } finally {
            lock.unlock();
        }
    }
}
