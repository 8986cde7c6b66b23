/**
 * A sans-IO Homa endpoint (draft-ousterhout-tsvwg-homa): {@link io.homa.engine.HomaEngine}, its
 * settings ({@link io.homa.engine.EngineConfig}), what it sends ({@link io.homa.engine.SendOptions})
 * and what it reports ({@link io.homa.engine.HomaEvent}, {@link io.homa.engine.EngineCounters}).
 *
 * <p>{@code HomaEngine} only dispatches; each section of the draft has a package-private component
 * of its own: {@code Sender} (DATA out, SRPT; "Sender") with {@code Pacer} ("Pacing");
 * {@code SenderFeedback} (GRANT, RESEND and CUTOFFS in; "Retransmission"); {@code Receiver} (DATA
 * in, RESENDs for gaps, CUTOFFS out; "Receiver") with {@code GrantScheduler} ("Flow control") and
 * {@code UnscheduledCutoffs} ("Priorities"); {@code Timers} over a {@code TimerQueue}
 * ("Timeouts"); {@code AtMostOnce} with {@code FinishedRpcIds} (ACK, NEED_ACK, RPC_UNKNOWN;
 * "At-most-once semantics"); {@code EndpointIdentity} (our rpcids, server epoch and token key) and
 * {@code EpochLearning} (a server's epoch and token), which carry at-most-once across restarts;
 * {@code AddressValidation} (at most 3x to a client address until it proves it receives our
 * packets, RFC 9000 §8.1: the draft's "Security" section leaves this open); {@code ControlQueue},
 * {@code RpcTable}, {@code ClientRpc} and {@code ServerRpc} (each RPC's explicit states).
 */
package io.homa.engine;
