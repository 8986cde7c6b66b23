package io.homa.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.bench.systems.SystemKind;
import io.homa.bench.systems.SystemSettings;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The server process gets the settings the load generator was given, on/off flags included. */
class ServerArgumentsTest {
    private static SystemSettings roundTrip(SystemSettings settings) {
        ServerMain server = new ServerMain();
        new CommandLine(server).parseArgs(ServerProcess.arguments(List.of(SystemKind.HOMA, SystemKind.GRPC), settings)
                .toArray(String[]::new));
        return server.settings();
    }

    @Test
    void shouldPassEveryCombinationOfTheOnOffFlags() {
        for (boolean gso : new boolean[] {true, false}) {
            for (boolean direct : new boolean[] {true, false}) {
                SystemSettings settings = new SystemSettings(2_000, 1_500, direct, gso);
                assertThat(roundTrip(settings)).isEqualTo(settings);
            }
        }
    }

    @Test
    void shouldPassTheMarkingAndTheHostOfATestbedServer() {
        for (io.homa.reactive.HomaTransportConfig.PriorityTos tos : io.homa.reactive.HomaTransportConfig.PriorityTos.values()) {
            for (boolean incast : new boolean[] {true, false}) {
                SystemSettings settings = SystemSettings.defaults().withHomaMarking(tos, incast).withBindHost("198.18.0.3")
                        .withHomaIncastBuffer(37_500);
                assertThat(roundTrip(settings)).isEqualTo(settings);
            }
        }
    }

    @Test
    void shouldPassTheSecurityMode() {
        for (io.homa.reactive.HomaSecurityConfig.Mode mode : io.homa.reactive.HomaSecurityConfig.Mode.values()) {
            SystemSettings settings = new SystemSettings(2_000, 0, true, true, mode);
            assertThat(roundTrip(settings)).isEqualTo(settings);
            assertThat(ServerProcess.arguments(List.of(SystemKind.HOMA), settings))
                    .contains("--homa-security=" + mode.propertyValue());
        }
        LoadGenerator generator = new LoadGenerator();
        new CommandLine(generator).parseArgs("--homa-security=encrypt");
        assertThat(generator.homaSecurity).isEqualTo(io.homa.reactive.HomaSecurityConfig.Mode.ENCRYPT);
        assertThat(new LoadGenerator().homaSecurity).isEqualTo(io.homa.reactive.HomaSecurityConfig.Mode.OFF);
    }

    @Test
    void shouldPassTheCongestionControl() {
        for (io.homa.engine.CongestionControl mode : io.homa.engine.CongestionControl.values()) {
            SystemSettings settings = SystemSettings.defaults().withHomaCongestionControl(mode);
            assertThat(roundTrip(settings)).isEqualTo(settings);
            assertThat(ServerProcess.arguments(List.of(SystemKind.HOMA), settings))
                    .contains("--homa-congestion-control=" + mode.name());
        }
        LoadGenerator generator = new LoadGenerator();
        new CommandLine(generator).setCaseInsensitiveEnumValuesAllowed(true).parseArgs("--homa-congestion-control=rtt");
        assertThat(generator.homaCongestionControl).isEqualTo(io.homa.engine.CongestionControl.RTT);
        assertThat(new LoadGenerator().homaCongestionControl).isEqualTo(io.homa.engine.CongestionControl.OFF);
    }

    @Test
    void shouldTurnOffWhatTheLoadGeneratorsNoFlagsTurnOff() {
        LoadGenerator generator = new LoadGenerator();
        new CommandLine(generator).parseArgs("--no-homa-gso", "--no-pin");
        assertThat(generator.homaGso).isFalse();
        assertThat(generator.pin).isFalse();
        assertThat(generator.grpcDirectExecutor).isTrue();
        new CommandLine(generator = new LoadGenerator()).parseArgs();
        assertThat(generator.homaGso).isTrue();
        assertThat(generator.pin).isTrue();
    }
}
