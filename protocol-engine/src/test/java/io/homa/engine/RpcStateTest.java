package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The explicit lifecycles of {@link ClientRpc} and {@link ServerRpc}: every (from, to) pair. */
class RpcStateTest {
    private static final long INTERVAL_NS = 10_000_000L;

    /** The documented client table, written out independently of {@link ClientRpc.State#allows}. */
    private static final Map<ClientRpc.State, Set<ClientRpc.State>> CLIENT_TABLE = Map.of(
            ClientRpc.State.QUEUED, EnumSet.of(ClientRpc.State.SENDING_REQUEST, ClientRpc.State.DONE),
            ClientRpc.State.SENDING_REQUEST, EnumSet.of(ClientRpc.State.RECEIVING_RESPONSE, ClientRpc.State.DONE),
            ClientRpc.State.RECEIVING_RESPONSE, EnumSet.of(ClientRpc.State.DONE),
            ClientRpc.State.DONE, EnumSet.noneOf(ClientRpc.State.class));

    /** A legal path from QUEUED to each client state. */
    private static final Map<ClientRpc.State, List<ClientRpc.State>> CLIENT_PATH = Map.of(
            ClientRpc.State.QUEUED, List.of(),
            ClientRpc.State.SENDING_REQUEST, List.of(ClientRpc.State.SENDING_REQUEST),
            ClientRpc.State.RECEIVING_RESPONSE, List.of(ClientRpc.State.SENDING_REQUEST, ClientRpc.State.RECEIVING_RESPONSE),
            ClientRpc.State.DONE, List.of(ClientRpc.State.DONE));

    /** The documented server table. */
    private static final Map<ServerRpc.State, Set<ServerRpc.State>> SERVER_TABLE = Map.of(
            ServerRpc.State.RECEIVING_REQUEST, EnumSet.of(ServerRpc.State.IN_SERVICE, ServerRpc.State.DEAD),
            ServerRpc.State.IN_SERVICE, EnumSet.of(ServerRpc.State.SENDING_RESPONSE, ServerRpc.State.DEAD),
            ServerRpc.State.SENDING_RESPONSE, EnumSet.of(ServerRpc.State.AWAITING_ACK, ServerRpc.State.DEAD),
            ServerRpc.State.AWAITING_ACK, EnumSet.of(ServerRpc.State.DEAD),
            ServerRpc.State.DEAD, EnumSet.noneOf(ServerRpc.State.class));

    private static final Map<ServerRpc.State, List<ServerRpc.State>> SERVER_PATH = Map.of(
            ServerRpc.State.RECEIVING_REQUEST, List.of(),
            ServerRpc.State.IN_SERVICE, List.of(ServerRpc.State.IN_SERVICE),
            ServerRpc.State.SENDING_RESPONSE, List.of(ServerRpc.State.IN_SERVICE, ServerRpc.State.SENDING_RESPONSE),
            ServerRpc.State.AWAITING_ACK, List.of(ServerRpc.State.IN_SERVICE, ServerRpc.State.SENDING_RESPONSE,
                    ServerRpc.State.AWAITING_ACK),
            ServerRpc.State.DEAD, List.of(ServerRpc.State.DEAD));

    private static Peer peer() {
        return new Peer(new InetSocketAddress("10.0.0.9", 7000), 0);
    }

    private static ClientRpc clientIn(ClientRpc.State state) {
        ClientRpc rpc = new ClientRpc(42, peer());
        CLIENT_PATH.get(state).forEach(rpc::moveTo);
        assertThat(rpc.state()).isEqualTo(state);
        return rpc;
    }

    private static ServerRpc serverIn(ServerRpc.State state) {
        Peer peer = peer();
        ServerRpc rpc = new ServerRpc(42, peer, new InboundMessage(100, 100, peer, 43));
        SERVER_PATH.get(state).forEach(rpc::moveTo);
        assertThat(rpc.state()).isEqualTo(state);
        return rpc;
    }

    @Test
    void shouldStartClientRpcsQueuedAndServerRpcsReceiving() {
        assertThat(new ClientRpc(2, peer()).state()).isEqualTo(ClientRpc.State.QUEUED);
        Peer peer = peer();
        assertThat(new ServerRpc(2, peer, new InboundMessage(1, 1, peer, 3)).state())
                .isEqualTo(ServerRpc.State.RECEIVING_REQUEST);
    }

    @Test
    void shouldAllowExactlyTheDocumentedClientMoves() {
        assertThat(CLIENT_TABLE.keySet()).containsExactlyInAnyOrder(ClientRpc.State.values());
        int allowed = 0;
        for (ClientRpc.State from : ClientRpc.State.values()) {
            for (ClientRpc.State to : ClientRpc.State.values()) {
                boolean expected = CLIENT_TABLE.get(from).contains(to);
                assertThat(from.allows(to)).as("%s -> %s", from, to).isEqualTo(expected);
                ClientRpc rpc = clientIn(from);
                if (expected) {
                    rpc.moveTo(to);
                    assertThat(rpc.state()).as("%s -> %s", from, to).isEqualTo(to);
                    allowed++;
                } else {
                    assertThatThrownBy(() -> rpc.moveTo(to))
                            .as("%s -> %s", from, to)
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining(from + " -> " + to)
                            .hasMessageContaining("42");
                    assertThat(rpc.state()).as("a refused move changes nothing").isEqualTo(from);
                }
            }
        }
        assertThat(allowed).isEqualTo(5);
    }

    @Test
    void shouldAllowExactlyTheDocumentedServerMoves() {
        assertThat(SERVER_TABLE.keySet()).containsExactlyInAnyOrder(ServerRpc.State.values());
        int allowed = 0;
        for (ServerRpc.State from : ServerRpc.State.values()) {
            for (ServerRpc.State to : ServerRpc.State.values()) {
                boolean expected = SERVER_TABLE.get(from).contains(to);
                assertThat(from.allows(to)).as("%s -> %s", from, to).isEqualTo(expected);
                ServerRpc rpc = serverIn(from);
                if (expected) {
                    rpc.moveTo(to);
                    assertThat(rpc.state()).as("%s -> %s", from, to).isEqualTo(to);
                    allowed++;
                } else {
                    assertThatThrownBy(() -> rpc.moveTo(to))
                            .as("%s -> %s", from, to)
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining(from + " -> " + to)
                            .hasMessageContaining("42");
                    assertThat(rpc.state()).as("a refused move changes nothing").isEqualTo(from);
                }
            }
        }
        assertThat(allowed).isEqualTo(7);
    }

    @Test
    void shouldCountOnlyStatesPastDeliveryAsDelivered() {
        assertThat(EnumSet.allOf(ServerRpc.State.class).stream().filter(ServerRpc.State::delivered))
                .containsExactlyInAnyOrder(ServerRpc.State.IN_SERVICE, ServerRpc.State.SENDING_RESPONSE,
                        ServerRpc.State.AWAITING_ACK);
    }

    @Test
    void shouldNotStartTheResendTimerWhenAQueuedClientRpcHearsFromItsServer() {
        ClientRpc rpc = clientIn(ClientRpc.State.QUEUED);
        rpc.resendsWithoutAnswer = 3;
        rpc.heard(5_000);
        assertThat(rpc.nextResendNs).as("no packet has left: no RESEND timer").isEqualTo(Long.MAX_VALUE);
        assertThat(rpc.timerArmed()).isFalse();
        assertThat(rpc.heardAbout).isTrue();
        assertThat(rpc.lastHeardNs).isEqualTo(5_000);
        assertThat(rpc.resendsWithoutAnswer).isZero();
    }

    @Test
    void shouldRestartTheResendTimerWhenASendingClientRpcHearsFromItsServer() {
        for (ClientRpc.State state : List.of(ClientRpc.State.SENDING_REQUEST, ClientRpc.State.RECEIVING_RESPONSE)) {
            ClientRpc rpc = clientIn(state);
            rpc.nextResendNs = 1_000;
            rpc.resendsWithoutAnswer = 2;
            rpc.resendBackoffNs = 8 * INTERVAL_NS;
            rpc.heardBusy(-9_000);
            assertThat(rpc.nextResendNs).as("BUSY keeps the backoff").isEqualTo(-9_000 + 8 * INTERVAL_NS);
            assertThat(rpc.resendsWithoutAnswer).isEqualTo(2);
            rpc.heard(-7_000); // any clock origin
            assertThat(rpc.nextResendNs).as(state.name() + ": backoff ended").isEqualTo(-7_000 + INTERVAL_NS);
            assertThat(rpc.resendBackoffNs).isZero();
            assertThat(rpc.lastHeardNs).isEqualTo(-7_000);
            assertThat(rpc.resendsWithoutAnswer).isZero();
            assertThat(rpc.heardAbout).isTrue();
        }
    }

    @Test
    void shouldRestartTheServerTimerOnlyWhileReceivingTheRequest() {
        ServerRpc receiving = serverIn(ServerRpc.State.RECEIVING_REQUEST);
        receiving.resendsWithoutAnswer = 4;
        receiving.heard(100);
        assertThat(receiving.nextTimerNs).isEqualTo(100 + INTERVAL_NS);
        assertThat(receiving.lastHeardNs).isEqualTo(100);
        assertThat(receiving.resendsWithoutAnswer).isZero();

        for (ServerRpc.State state : List.of(ServerRpc.State.IN_SERVICE, ServerRpc.State.SENDING_RESPONSE,
                ServerRpc.State.AWAITING_ACK)) {
            ServerRpc rpc = serverIn(state);
            rpc.nextTimerNs = 555;
            rpc.resendsWithoutAnswer = 2;
            rpc.heard(100);
            // The NEED_ACK schedule is not pushed back by traffic: the client still owes the ACK.
            assertThat(rpc.nextTimerNs).as(state.name()).isEqualTo(555);
            assertThat(rpc.lastHeardNs).isEqualTo(100);
            assertThat(rpc.resendsWithoutAnswer).isZero();
        }
    }
}
