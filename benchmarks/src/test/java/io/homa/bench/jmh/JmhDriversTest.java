package io.homa.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import io.homa.engine.EngineConfig;

/** The benchmarks' drivers do what the benchmarks claim, so that a changed engine fails here, not in a JMH run. */
class JmhDriversTest {

    @ParameterizedTest
    @EnumSource(SteadyStateReceiver.Side.class)
    void shouldAnswerEveryDataPacketWithOneGrantAcrossAMessageChange(SteadyStateReceiver.Side side) {
        SteadyStateReceiver receiver = new SteadyStateReceiver(side, 14_160);
        int steps = receiver.packetsPerMessage() + 100;
        for (int i = 0; i < steps; i++) {
            receiver.step();
        }
        assertThat(receiver.messages()).isEqualTo(2);
        receiver.verify(0.99);
        assertThat(receiver.engine().inboundBufferedBytes()).as("the dropped message was freed")
                .isLessThan(2L * 100 * receiver.payloadBytes());
    }

    @Test
    void shouldSendOneDataPacketPerStepAcrossARequestChange() {
        SteadyStateSender sender = new SteadyStateSender();
        int steps = sender.packetsPerMessage() + 100;
        int lastEnd = 0;
        for (int i = 0; i < steps; i++) {
            lastEnd = sender.step();
        }
        assertThat(sender.messages()).isEqualTo(2);
        assertThat(sender.steps()).isEqualTo(steps);
        assertThat(lastEnd).as("the second request's bytes sent").isPositive();
        sender.verify();
    }

    @Test
    void shouldCompleteRpcsBetweenTwoEngines() {
        InMemoryEnginePair pair = new InMemoryEnginePair(EngineConfig.defaults(), 100_000, 100);
        for (int i = 0; i < 50; i++) {
            assertThat(pair.call()).isEqualTo(100);
        }
        assertThat(pair.rpcsCompleted()).isEqualTo(50);
        pair.verify();
    }
}
