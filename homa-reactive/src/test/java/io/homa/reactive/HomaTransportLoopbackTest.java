package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.engine.EngineConfig;
import io.homa.engine.EngineCounters;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.internal.transport.TransportProbes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;
import reactor.test.StepVerifier;

/** Two real transports over loopback UDP: an echo server and a client-only endpoint. */
class HomaTransportLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final int MIB = 1024 * 1024;

    private final List<HomaTransport> transports = new ArrayList<>();

    @AfterEach
    void disposeTransports() {
        transports.forEach(HomaTransport::disposeNow);
    }

    private HomaTransport bind(HomaTransportConfig config, HomaRequestHandler handler) {
        HomaTransport transport = HomaTransport.bindNow(config, handler, TIMEOUT);
        transports.add(transport);
        return transport;
    }

    private HomaTransport bind(HomaRequestHandler handler) {
        return bind(loopback().build(), handler);
    }

    private static HomaTransportConfig.Builder loopback() {
        return HomaTransportConfig.builder().bindAddress("127.0.0.1");
    }

    private static HomaRequestHandler echo() {
        return request -> Mono.just(request.payload().retain());
    }

    private static InetSocketAddress address(HomaTransport transport) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), transport.localAddress().getPort());
    }

    private static byte[] randomBytes(Random random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    @Test
    void shouldCallTheHandlerOnTheEventLoopAndMeasureTheLoopsLagWhenItBlocks() {
        java.util.concurrent.atomic.AtomicReference<String> thread = new java.util.concurrent.atomic.AtomicReference<>();
        HomaTransport server = bind(request -> {
            thread.set(Thread.currentThread().getName());
            if (request.payload().getByte(request.payload().readerIndex()) == 1) {
                try {
                    // What a handler must never do: hold the loop. A sleep, as the test is about
                    // real time passing: the loop's lag probe measures how late it then ran.
                    Thread.sleep(400);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return Mono.just(request.payload().retain());
        });
        HomaTransport client = bind(null);

        assertThat(client.call(address(server), new byte[] {0}).block(TIMEOUT)).containsExactly(0);
        assertThat(thread.get()).as("no thread hop").startsWith("homa-");
        // One of the server's loops (with several, the kernel's hash of the client's address picks it).
        java.util.List<String> loopThreads = TransportProbes.eventLoops(server).stream()
                .map(loop -> Mono.fromCallable(() -> Thread.currentThread().getName())
                        .subscribeOn(reactor.core.scheduler.Schedulers.fromExecutor(loop)).block(TIMEOUT))
                .toList();
        assertThat(loopThreads).contains(thread.get());
        assertThat(client.call(address(server), new byte[] {1}).block(TIMEOUT)).containsExactly(1);
        // The probe due during the 400 ms block ran at least 300 ms late; it runs every 100 ms.
        await().atMost(TIMEOUT).until(() -> TransportProbes.maxEventLoopLagNs(server) >= 300_000_000L);
    }

    @Test
    void shouldCompleteSingleSmallRpc() {
        HomaTransport server = bind(request -> Mono.just(Unpooled.copiedBuffer(
                "pong:" + request.payload().toString(StandardCharsets.UTF_8), StandardCharsets.UTF_8)));
        HomaTransport client = bind(null);

        byte[] response = client.call(address(server), "ping".getBytes(StandardCharsets.UTF_8)).block(TIMEOUT);

        assertThat(new String(response, StandardCharsets.UTF_8)).isEqualTo("pong:ping");
        EngineCounters counters = client.counters().block(TIMEOUT);
        assertThat(counters.rpcsStarted()).isEqualTo(1);
        assertThat(counters.rpcsCompleted()).isEqualTo(1);
        assertThat(server.counters().block(TIMEOUT).requestsDelivered()).isEqualTo(1);
    }

    @Test
    void shouldCallWithByteBufAndReleaseRequest() {
        HomaTransport server = bind(echo());
        HomaTransport client = bind(null);
        ByteBuf request = Unpooled.directBuffer().writeBytes(new byte[] {1, 2, 3});

        ByteBuf response = client.call(address(server), request).block(TIMEOUT);

        assertThat(request.refCnt()).isZero();
        assertThat(ByteBufUtil.getBytes(response)).containsExactly(1, 2, 3);
        response.release();
    }

    @Test
    void shouldEchoOneByteAndOneMebibyteMessages() {
        HomaTransport server = bind(echo());
        HomaTransport client = bind(null);
        Random random = new Random(1);
        byte[] oneByte = randomBytes(random, 1);
        byte[] oneMebibyte = randomBytes(random, MIB);

        assertThat(client.call(address(server), oneByte).block(TIMEOUT)).isEqualTo(oneByte);
        assertThat(client.call(address(server), oneMebibyte).block(TIMEOUT)).isEqualTo(oneMebibyte);
    }

    /**
     * RTT congestion control on both ends over real sockets: the client's probes are answered (its
     * address validated in the first round trip), and short and long calls complete.
     */
    @Test
    void shouldProbeRoundTripsWithRttCongestionControl() {
        HomaTransportConfig config = loopback().congestionControl(io.homa.engine.CongestionControl.RTT)
                .rttProbeIntervalNs(10_000).build();
        HomaTransport server = bind(config, echo());
        HomaTransport client = bind(config, null);
        Random random = new Random(2);
        for (int i = 0; i < 20; i++) {
            byte[] message = randomBytes(random, i % 4 == 3 ? MIB : 1 + random.nextInt(2_000));
            assertThat(client.call(address(server), message).block(TIMEOUT)).isEqualTo(message);
        }
        EngineCounters counters = client.counters().block(TIMEOUT);
        assertThat(counters.rttProbesSent()).isPositive();
        assertThat(counters.rttProbesAnswered()).isPositive();
        assertThat(counters.malformedPackets()).isZero();
    }

    /**
     * 1,000 RPCs in flight at once, 1 B to 1 MiB each (about 541 MB each way), all echoed intact.
     * Loopback socket buffers overflow, so this also exercises RESEND, BUSY and retransmission.
     *
     * <p>Default settings: client and server share this JVM, whose collector stops both for up to
     * ~350 ms under this load (measured with -Xlog:gc on a 2-core machine); the 5 s silence budget
     * covers that (the former 110 ms of tolerated silence timed out a few RPCs in one run of ten).
     */
    @Test
    void shouldCompleteThousandConcurrentRpcsOfRandomSizesUpToOneMebibyte() {
        HomaTransportConfig config = loopback()
                .engine(EngineConfig.defaults())
                .build();
        HomaTransport server = bind(config, echo());
        HomaTransport client = bind(config, null);
        InetSocketAddress serverAddress = address(server);
        Random random = new Random(20240601L);
        int rpcs = 1000;
        int[] lengths = new int[rpcs];
        long[] seeds = new long[rpcs];
        for (int i = 0; i < rpcs; i++) {
            lengths[i] = 1 + random.nextInt(MIB);
            seeds[i] = random.nextLong();
        }
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger correct = new AtomicInteger();
        long startNs = System.nanoTime();
        try {
            Flux.range(0, rpcs)
                    .flatMap(i -> {
                        byte[] request = randomBytes(new Random(seeds[i]), lengths[i]);
                        return client.call(serverAddress, request)
                                .doOnNext(response -> {
                                    if (Arrays.equals(response, request)) {
                                        correct.incrementAndGet();
                                    } else {
                                        failures.add("RPC " + i + ": wrong response of " + response.length + " bytes");
                                    }
                                })
                                .onErrorResume(e -> {
                                    failures.add("RPC " + i + ": " + e);
                                    return Mono.empty();
                                });
                    }, rpcs)
                    .then()
                    .block(Duration.ofSeconds(120));
        } finally {
            long elapsedMs = (System.nanoTime() - startNs) / 1_000_000;
            System.out.printf("1,000 concurrent RPCs (%,d bytes each way): %,d ms, %d correct, %d failed %s%n"
                            + "client %s%nserver %s%n",
                    Arrays.stream(lengths).asLongStream().sum(), elapsedMs, correct.get(), failures.size(),
                    failures.stream().limit(3).toList(),
                    client.counters().block(TIMEOUT), server.counters().block(TIMEOUT));
        }
        assertThat(failures).isEmpty();
        assertThat(correct).hasValue(rpcs);
    }

    @Test
    void shouldFailWithTimeoutWhenNoServerListens() throws Exception {
        int silentPort;
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            silentPort = socket.getLocalPort();
        }
        EngineConfig fast = EngineConfig.builder().resendIntervalNs(2_000_000L)
                .peerSilenceTimeoutNs(EngineConfig.MIN_PEER_SILENCE_TIMEOUT_NS).build();
        HomaTransport client = bind(loopback().engine(fast).build(), null);
        InetSocketAddress nobody = new InetSocketAddress(InetAddress.getLoopbackAddress(), silentPort);

        StepVerifier.create(client.call(nobody, new byte[] {1}))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaTimeoutException.class);
                    HomaTimeoutException timeout = (HomaTimeoutException) e;
                    assertThat(timeout.status()).isEqualTo(HomaStatus.UNAVAILABLE);
                    assertThat(timeout.peer()).isEqualTo(nobody);
                    assertThat(timeout.rpcId()).isPositive().isEven();
                })
                .verify(Duration.ofSeconds(5));
        assertThat(client.counters().block(TIMEOUT).timeouts()).isEqualTo(1);
    }

    @Test
    void shouldCountMalformedDatagramsAndKeepServing() throws Exception {
        HomaTransport server = bind(echo());
        HomaTransport client = bind(null);
        InetSocketAddress serverAddress = address(server);
        long malformedBefore = server.counters().block(TIMEOUT).malformedPackets();

        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            byte[] unknownType = new byte[HomaHeader.COMMON_HEADER_LENGTH];
            unknownType[HomaHeader.TYPE_OFFSET] = 99;
            ByteBuffer hugeData = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + 10);
            ((DataHeader) new DataHeader().wrap(hugeData, 0))
                    .writeCommon(PacketType.DATA, socket.getLocalPort(), serverAddress.getPort(), 2)
                    .messageLength(1 << 30)
                    .incoming(10)
                    .dataOffset(0);
            for (byte[] datagram : List.of(new byte[0], new byte[5], unknownType, hugeData.array())) {
                socket.send(new DatagramPacket(datagram, datagram.length, serverAddress));
            }
        }

        await().atMost(TIMEOUT).until(() -> server.counters().block(TIMEOUT).malformedPackets() - malformedBefore >= 4);
        assertThat(server.counters().block(TIMEOUT).malformedPackets() - malformedBefore).isEqualTo(4);
        assertThat(server.droppedDatagrams()).isZero();
        assertThat(client.call(serverAddress, new byte[] {42}).block(TIMEOUT)).containsExactly(42);
    }

    @Test
    void shouldAnswerAStaleCutoffVersionWithCutoffsFromAFreshServer() throws Exception {
        // A client holding the cutoffs of a previous process on this port (version 7) is corrected
        // by its first DATA (draft "CUTOFFS"), not after the server has seen 256 messages.
        HomaTransport server = bind(echo());
        InetSocketAddress serverAddress = address(server);
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            ByteBuffer request = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + 1);
            new DataHeader().wrap(request, 0)
                    .writeCommon(PacketType.DATA, socket.getLocalPort(), serverAddress.getPort(), 2)
                    .messageLength(1)
                    .incoming(1)
                    .cutoffVersion(7)
                    .dataOffset(0)
                    .doff(DataHeader.DOFF);
            socket.send(new DatagramPacket(request.array(), request.capacity(), serverAddress));
            List<PacketType> answers = new ArrayList<>();
            byte[] buffer = new byte[65_536];
            while (!answers.contains(PacketType.CUTOFFS) && answers.size() < 20) {
                DatagramPacket answer = new DatagramPacket(buffer, buffer.length);
                socket.receive(answer); // fails the test with SocketTimeoutException after TIMEOUT
                answers.add(PacketType.fromCode(Byte.toUnsignedInt(buffer[HomaHeader.TYPE_OFFSET])));
                if (answers.get(answers.size() - 1) == PacketType.CUTOFFS) {
                    CutoffsHeader cutoffs = new CutoffsHeader().wrap(ByteBuffer.wrap(buffer, 0, answer.getLength()), 0);
                    assertThat(cutoffs.cutoffVersion()).isNotEqualTo(7).isNotZero();
                }
            }
            assertThat(answers).as("the server's answers to one DATA").contains(PacketType.CUTOFFS);
        }
    }

    @Test
    void shouldDrainEveryQueuedDatagramAfterABurst() throws Exception {
        // A read that stopped early and were not signalled again (an edge-triggered socket) would
        // leave the rest of this burst queued, unseen until another datagram arrives, and none
        // does. The burst is queued while the event loop is held, so that it is signalled as one
        // readiness event. One loop: the one the test holds.
        HomaTransport server = bind(loopback().loops(1).build(), echo());
        InetSocketAddress serverAddress = address(server);
        int burst = 3000;
        CountDownLatch loopHeld = new CountDownLatch(1);
        CountDownLatch burstSent = new CountDownLatch(1);
        TransportProbes.eventLoop(server).execute(() -> {
            loopHeld.countDown();
            try {
                burstSent.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(loopHeld.await(5, TimeUnit.SECONDS)).isTrue();
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            byte[] tooShort = new byte[5];
            for (int i = 0; i < burst; i++) {
                socket.send(new DatagramPacket(tooShort, tooShort.length, serverAddress));
            }
        } finally {
            burstSent.countDown();
        }

        long counted = server.counters()
                .map(EngineCounters::malformedPackets)
                .filter(n -> n >= burst)
                .repeatWhenEmpty(400, r -> r.delayElements(Duration.ofMillis(5)))
                .onErrorResume(e -> server.counters().map(EngineCounters::malformedPackets))
                .block(TIMEOUT);
        assertThat(counted).isEqualTo(burst);
    }

    @Test
    void shouldCompleteConcurrentRpcsWhenClientAndServerShareAnEventLoop() {
        LoopResources oneLoop = LoopResources.create("shared-loop-test", 1, true);
        HomaTransport server = HomaTransport.create(loopback().build()).handler(echo()).runOn(oneLoop).bindNow(TIMEOUT);
        HomaTransport client = HomaTransport.create(loopback().build()).runOn(oneLoop).bindNow(TIMEOUT);
        transports.add(server);
        transports.add(client);
        assertThat(loopOf(client)).isSameAs(loopOf(server));
        HomaTransport sharing = client;
        InetSocketAddress serverAddress = address(server);

        List<Integer> lengths = Flux.range(0, 200)
                .flatMap(i -> {
                    byte[] request = randomBytes(new Random(i), 1 + i * 100);
                    return sharing.call(serverAddress, request)
                            .filter(response -> Arrays.equals(response, request))
                            .map(response -> response.length);
                }, 200)
                .collectList()
                .block(Duration.ofSeconds(30));

        assertThat(lengths).hasSize(200);
    }

    private static Object loopOf(HomaTransport transport) {
        return TransportProbes.eventLoop(transport);
    }

    @Test
    void shouldRejectEmptyAndOversizedRequestsLazily() {
        HomaTransport client = bind(null);
        InetSocketAddress somewhere = new InetSocketAddress(InetAddress.getLoopbackAddress(), 9);
        Mono<byte[]> empty = client.call(somewhere, new byte[0]);
        Mono<byte[]> oversized = client.call(somewhere, new byte[MIB + 1]);

        StepVerifier.create(empty)
                .expectErrorSatisfies(e -> {
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
                    assertThat(e).hasMessage("request length must be between 1 and 1048576 bytes (max-message-size), was 0");
                })
                .verify(TIMEOUT);
        StepVerifier.create(oversized)
                .expectErrorSatisfies(e -> {
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.RESOURCE_EXHAUSTED);
                    assertThat(e).hasMessageContaining("was 1048577");
                })
                .verify(TIMEOUT);
        assertThat(client.counters().block(TIMEOUT).rpcsStarted()).isZero();
    }

    @Test
    void shouldSendNothingBeforeSubscribeAndOneRpcPerSubscription() {
        HomaTransport server = bind(echo());
        HomaTransport client = bind(null);
        Mono<byte[]> call = client.call(address(server), new byte[] {7});

        assertThat(client.counters().block(TIMEOUT).rpcsStarted()).isZero();
        call.block(TIMEOUT);
        call.block(TIMEOUT);

        assertThat(client.counters().block(TIMEOUT).rpcsStarted()).isEqualTo(2);
        assertThat(server.counters().block(TIMEOUT).requestsDelivered()).isEqualTo(2);
    }

    @Test
    void shouldCancelAbandonedRpc() throws Exception {
        HomaTransport server = bind(request -> Mono.never());
        HomaTransport client = bind(null);

        Disposable subscription = client.call(address(server), new byte[] {1}).subscribe();
        awaitRequestsDelivered(server, 1);
        subscription.dispose();

        Integer active = TransportProbes.activeClientRpcs(client)
                .filter(n -> n == 0)
                .repeatWhenEmpty(1000, r -> r.delayElements(Duration.ofMillis(5)))
                .block(TIMEOUT);
        assertThat(active).isZero();
        assertThat(TransportProbes.pendingCallCount(client).block(TIMEOUT)).isZero();
    }

    @Test
    void shouldFailInFlightCallsWithUnavailableOnDispose() throws Exception {
        HomaTransport server = bind(request -> Mono.never());
        HomaTransport client = bind(null);
        Mono<byte[]> call = client.call(address(server), new byte[] {1});

        StepVerifier.create(call)
                .then(() -> awaitRequestsDelivered(server, 1))
                .then(client::dispose)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaException.class).isNotInstanceOf(HomaTimeoutException.class);
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE);
                })
                .verify(TIMEOUT);
        StepVerifier.create(client.call(address(server), new byte[] {1}))
                .expectErrorSatisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE))
                .verify(TIMEOUT);
        assertThat(client.isDisposed()).isTrue();
        client.onDispose().block(TIMEOUT);
    }

    @Test
    void shouldDropAndCountRequestsAtClientOnlyEndpointAndFailTheCaller() {
        HomaTransport clientOnly = bind(null);
        HomaTransport caller = bind(null);

        StepVerifier.create(caller.call(address(clientOnly), new byte[] {1}))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaException.class).isNotInstanceOf(HomaTimeoutException.class);
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE);
                    assertThat(e).hasMessageContaining("RPC_UNKNOWN");
                })
                .verify(TIMEOUT);
        assertThat(clientOnly.droppedRequests()).isEqualTo(1);
    }

    @Test
    void shouldFailTheCallerWhenTheHandlerFailsAndNeverRunItTwice() {
        AtomicInteger executions = new AtomicInteger();
        HomaTransport server = bind(request -> {
            executions.incrementAndGet();
            return Mono.error(new IllegalStateException("handler bug"));
        });
        HomaTransport client = bind(null);

        StepVerifier.create(client.call(address(server), new byte[] {1, 2, 3}))
                .expectErrorSatisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE))
                .verify(TIMEOUT);
        assertThat(executions).hasValue(1);
    }

    @Test
    void shouldRunHandlersOnTheHandlerScheduler() {
        var scheduler = Schedulers.newSingle("homa-handler-test");
        try {
            HomaTransport server = HomaTransport.bindNow(loopback().build(),
                    request -> Mono.fromCallable(() -> Unpooled.copiedBuffer(
                            Thread.currentThread().getName(), StandardCharsets.UTF_8)),
                    scheduler, TIMEOUT);
            transports.add(server);
            HomaTransport client = bind(null);

            byte[] thread = client.call(address(server), new byte[] {1}).block(TIMEOUT);

            assertThat(new String(thread, StandardCharsets.UTF_8)).startsWith("homa-handler-test");
        } finally {
            scheduler.dispose();
        }
    }

    @Test
    void shouldBusyPollBeforeSleepingOnNativeLoopsOnly() {
        // A 1 ms window: a loopback echo's reply comes back within it on any machine that runs the
        // two loops at all, so some polls must find it (no upper bound on any time is asserted).
        HomaTransport server = bind(loopback().busyPollNs(1_000_000).build(), echo());
        HomaTransport client = bind(loopback().busyPollNs(1_000_000).build(), null);
        HomaTransport sleeper = bind(loopback().busyPollNs(0).build(), null);
        HomaTransport nio = bind(loopback().nativeTransport(false).build(), null);

        for (int i = 0; i < 200; i++) {
            assertThat(client.call(address(server), new byte[] {(byte) i}).block(TIMEOUT)).containsExactly((byte) i);
        }
        assertThat(sleeper.call(address(server), new byte[] {7}).block(TIMEOUT)).containsExactly(7);
        assertThat(nio.call(address(server), new byte[] {8}).block(TIMEOUT)).containsExactly(8);

        if (TransportProbes.epollAvailable()) {
            assertThat(client.dataPath()).contains("busy-poll 1000 µs before sleeping");
            assertThat(TransportProbes.busyPollHits(client)).isPositive();
            assertThat(TransportProbes.busyPollHits(server)).isPositive();
        }
        assertThat(sleeper.dataPath()).contains("busy-poll off");
        assertThat(TransportProbes.busyPollHits(sleeper)).isEqualTo(-1);
        assertThat(nio.dataPath()).contains("busy-poll off");
        assertThat(TransportProbes.busyPollHits(nio)).isEqualTo(-1);
    }

    @Test
    void shouldUseNativeEpollWhenAvailableAndNioWhenDisabled() {
        HomaTransport nativeServer = bind(echo());
        HomaTransport nioClient = bind(loopback().nativeTransport(false).build(), null);

        assertThat(TransportProbes.channelType(nativeServer).getSimpleName())
                .isEqualTo(TransportProbes.epollAvailable() ? "EpollDatagramChannel" : "NioDatagramChannel");
        assertThat(TransportProbes.channelType(nioClient).getSimpleName()).isEqualTo("NioDatagramChannel");
        assertThat(nioClient.call(address(nativeServer), new byte[] {5}).block(TIMEOUT)).containsExactly(5);
    }

    /**
     * A server that dies and is restarted on the same address serves the same client
     * again, without the client restarting: the client's record of the old server (its peer state)
     * does not stand in the way of the new one.
     */
    @Test
    void shouldServeTheSameClientAgainAfterTheServerRestartsOnTheSamePort() {
        HomaTransport first = bind(echo());
        int port = first.localAddress().getPort();
        HomaTransport client = bind(null);
        InetSocketAddress server = address(first);
        assertThat(client.call(server, new byte[] {1}).block(TIMEOUT)).containsExactly(1);
        first.disposeNow();

        HomaTransport second = bind(loopback().port(port).build(), request -> Mono.just(request.payload().retain()));
        // The client's next request still names the first server's epoch: the new one cannot tell it
        // from a copy the network delayed past the restart, so it refuses it unexecuted, and the call
        // fails at once with a status, not a timeout (at-most-once across restarts).
        assertThatThrownBy(() -> client.call(server, new byte[] {9}).block(TIMEOUT))
                .isInstanceOfSatisfying(HomaException.class, e -> {
                    assertThat(e.status()).isEqualTo(HomaStatus.UNAVAILABLE);
                    assertThat(e).hasMessageContaining("restarted");
                });
        // From then on the client makes first contact with the new server and is served.
        for (int i = 0; i < 20; i++) {
            byte[] request = new byte[] {(byte) i, 2, 3};
            assertThat(client.call(server, request).block(TIMEOUT)).as("call %d to the new server", i).containsExactly(request);
        }
        assertThat(second.counters().block(TIMEOUT).requestsDelivered()).isEqualTo(20);
        assertThat(client.counters().block(TIMEOUT).timeouts()).isZero();
    }

    @Test
    void shouldFailToBindAPortInUse() throws Exception {
        try (DatagramSocket taken = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            HomaTransportConfig config = loopback().port(taken.getLocalPort()).build();

            StepVerifier.create(HomaTransport.bind(config, null))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(HomaException.class).hasMessageContaining("cannot bind");
                        assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE);
                    })
                    .verify(TIMEOUT);
            assertThatThrownBy(() -> HomaTransport.bindNow(config, null, TIMEOUT))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("could not bind to 127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void shouldPaceAtTheLinkRate() {
        HomaTransportConfig slow = loopback().linkMbps(100).build();
        HomaTransport server = bind(slow, echo());
        HomaTransport client = bind(slow, null);
        byte[] oneMebibyte = randomBytes(new Random(3), MIB);

        long startNs = System.nanoTime();
        byte[] response = client.call(address(server), oneMebibyte).block(TIMEOUT);
        long elapsedMs = (System.nanoTime() - startNs) / 1_000_000;

        // 1 MiB plus headers each way at 100 Mbit/s is about 89 ms per direction.
        assertThat(response).isEqualTo(oneMebibyte);
        assertThat(elapsedMs).isGreaterThanOrEqualTo(150);
    }

    @Test
    void shouldWorkUnpaced() {
        HomaTransportConfig unpaced = loopback().linkMbps(0).build();
        HomaTransport server = bind(unpaced, echo());
        HomaTransport client = bind(unpaced, null);
        byte[] request = randomBytes(new Random(4), 200_000);

        assertThat(client.call(address(server), request).block(TIMEOUT)).isEqualTo(request);
    }

    @Test
    void shouldReportBoundAddress() {
        HomaTransport transport = bind(null);

        assertThat(transport.localAddress().getPort()).isPositive();
        assertThat(transport.localAddress().getAddress()).isEqualTo(InetAddress.getLoopbackAddress());
    }

    private static void awaitRequestsDelivered(HomaTransport server, long count) {
        server.counters()
                .filter(c -> c.requestsDelivered() >= count)
                .repeatWhenEmpty(1000, r -> r.delayElements(Duration.ofMillis(5)))
                .block(TIMEOUT);
    }
}
