package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SyscallCounterTest {
    @Test
    void shouldAddUpSendsAndReceivesFromPerfStatOutput() {
        String output = """
                12345,,raw_syscalls:sys_enter,1000,100.00,,
                100,,syscalls:sys_enter_sendmmsg,1000,100.00,,
                7,,syscalls:sys_enter_sendto,1000,100.00,,
                <not counted>,,syscalls:sys_enter_write,0,100.00,,
                300,,syscalls:sys_enter_recvmmsg,1000,100.00,,
                2,,syscalls:sys_enter_read,1000,100.00,,
                """;
        SyscallCounter.Counts counts = SyscallCounter.parse(output);
        assertThat(counts).isEqualTo(new SyscallCounter.Counts(12_345, 107, 302));
    }

    @Test
    void shouldGiveNothingWhenPerfPrintedNoTotal() {
        assertThat(SyscallCounter.parse("event syntax error: 'raw_syscalls:sys_enter'\n")).isNull();
        assertThat(SyscallCounter.parse("")).isNull();
    }
}
