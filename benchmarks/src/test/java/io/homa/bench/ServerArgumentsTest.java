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
    void shouldPassTheCongestionControlAsked() {
        assertThat(SystemSettings.defaults().homaCongestionControl()).isEqualTo(SystemSettings.CONGESTION_CONTROL_OFF);
        for (String mode : List.of(SystemSettings.CONGESTION_CONTROL_RTT, SystemSettings.CONGESTION_CONTROL_OFF)) {
            SystemSettings settings = SystemSettings.defaults().withHomaCongestionControl(mode).withBindHost("198.18.0.2");
            assertThat(settings.homaCongestionControl()).isEqualTo(mode);
            assertThat(roundTrip(settings)).isEqualTo(settings);
            assertThat(ServerProcess.arguments(List.of(SystemKind.HOMA), settings))
                    .contains("--homa-congestion-control=" + mode);
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> SystemSettings.defaults().withHomaCongestionControl("dctcp"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--homa-congestion-control");
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
