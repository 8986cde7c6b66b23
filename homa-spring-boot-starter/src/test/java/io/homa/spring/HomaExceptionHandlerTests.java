package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

/** {@link HomaExceptionHandler @HomaExceptionHandler} methods and the mapper built from them. */
class HomaExceptionHandlerTests {

    @Test
    void shouldPickTheHandlerOfTheClosestExceptionType() {
        HomaExceptionHandlerMethods handlers = HomaExceptionHandlerMethods.of(new Handlers(), Handlers.class);
        assertThat(handlers.map(new NoSuchElementException("no key k"))).satisfies((mapped) -> {
            assertThat(mapped.status()).isEqualTo(HomaStatus.NOT_FOUND);
            assertThat(mapped.getMessage()).isEqualTo("no key k");
        });
        assertThat(handlers.map(new IllegalArgumentException("bad")).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(handlers.map(new NumberFormatException("nan")).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(handlers.map(new IllegalStateException("other")).status()).isEqualTo(HomaStatus.ABORTED);
        assertThat(handlers.map(new UncheckedIOException("io", new java.io.IOException()))).satisfies((mapped) -> {
            assertThat(mapped.status()).isEqualTo(HomaStatus.UNAVAILABLE);
            assertThat(mapped.getMessage()).isEqualTo("storage is down");
        });
    }

    @Test
    void shouldPassWhenNoHandlerMatchesOrTheHandlerReturnsNull() {
        HomaExceptionHandlerMethods handlers = HomaExceptionHandlerMethods.of(new Handlers(), Handlers.class);
        assertThat(handlers.map(new AssertionError("not an exception handled"))).isNull();
        assertThat(handlers.map(new ArrayStoreException("declined"))).isNull();
    }

    @Test
    void shouldLeaveHomaExceptionsToHandlersDeclaredForThem() {
        HomaExceptionHandlerMethods generic = HomaExceptionHandlerMethods.of(new Handlers(), Handlers.class);
        assertThat(generic.map(new HomaException(HomaStatus.UNIMPLEMENTED, "unknown"))).isNull();
        HomaExceptionHandlerMethods specific = HomaExceptionHandlerMethods.of(new HomaHandlers(), HomaHandlers.class);
        assertThat(specific.map(new HomaException(HomaStatus.UNIMPLEMENTED, "unknown")).status())
                .isEqualTo(HomaStatus.NOT_FOUND);
    }

    @Test
    void shouldAskTheServiceHandlersBeforeTheAdvice() {
        HomaExceptionHandlerMethods advice = HomaExceptionHandlerMethods.of(new Handlers(), Handlers.class);
        HomaExceptionHandlerMethods local = HomaExceptionHandlerMethods.of(new LocalHandlers(), LocalHandlers.class);
        HomaExceptionMapper mapper = new HomaExceptionMapper(List.of(advice));
        IllegalArgumentException fromService = new IllegalArgumentException("x");
        mapper.tag(fromService, local);
        assertThat(mapper.map(fromService).status()).isEqualTo(HomaStatus.OUT_OF_RANGE);
        assertThat(mapper.map(new IllegalArgumentException("y")).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        IllegalStateException notLocal = new IllegalStateException("z");
        mapper.tag(notLocal, local);
        assertThat(mapper.map(notLocal).status()).isEqualTo(HomaStatus.ABORTED);
    }

    @Test
    void shouldFailOnHandlersThatBreakTheRules() {
        assertThatIllegalStateException()
                .isThrownBy(() -> HomaExceptionHandlerMethods.of(new BadReturn(), BadReturn.class))
                .withMessageContaining("BadReturn.handle(RuntimeException)")
                .withMessageContaining("must return a HomaStatus or a HomaException");
        assertThatIllegalStateException()
                .isThrownBy(() -> HomaExceptionHandlerMethods.of(new NoType(), NoType.class))
                .withMessageContaining("NoType.handle()")
                .withMessageContaining("must list the exceptions it handles");
        assertThatIllegalStateException()
                .isThrownBy(() -> HomaExceptionHandlerMethods.of(new Mismatch(), Mismatch.class))
                .withMessageContaining("Mismatch.handle(IllegalStateException)")
                .withMessageContaining("handles java.lang.IllegalArgumentException");
        assertThatIllegalStateException()
                .isThrownBy(() -> HomaExceptionHandlerMethods.of(new Twice(), Twice.class))
                .withMessageContaining("both handle java.lang.IllegalStateException");
    }

    static class Handlers {

        @HomaExceptionHandler
        HomaStatus notFound(NoSuchElementException ex) {
            return HomaStatus.NOT_FOUND;
        }

        @HomaExceptionHandler
        public HomaStatus invalid(IllegalArgumentException ex) {
            return HomaStatus.INVALID_ARGUMENT;
        }

        @HomaExceptionHandler({IllegalStateException.class, ArrayStoreException.class})
        public HomaException other(RuntimeException ex) {
            return (ex instanceof ArrayStoreException) ? null : new HomaException(HomaStatus.ABORTED, "aborted");
        }

        @HomaExceptionHandler(UncheckedIOException.class)
        public HomaException storage() {
            return new HomaException(HomaStatus.UNAVAILABLE, "storage is down");
        }
    }

    static class HomaHandlers {

        @HomaExceptionHandler
        public HomaStatus rename(HomaException ex) {
            return HomaStatus.NOT_FOUND;
        }
    }

    static class LocalHandlers {

        @HomaExceptionHandler
        public HomaStatus local(IllegalArgumentException ex) {
            return HomaStatus.OUT_OF_RANGE;
        }
    }

    static class BadReturn {

        @HomaExceptionHandler
        public String handle(RuntimeException ex) {
            return "no";
        }
    }

    static class NoType {

        @HomaExceptionHandler
        public HomaStatus handle() {
            return HomaStatus.INTERNAL;
        }
    }

    static class Mismatch {

        @HomaExceptionHandler(IllegalArgumentException.class)
        public HomaStatus handle(IllegalStateException ex) {
            return HomaStatus.INTERNAL;
        }
    }

    static class Twice {

        @HomaExceptionHandler
        public HomaStatus one(IllegalStateException ex) {
            return HomaStatus.INTERNAL;
        }

        @HomaExceptionHandler
        public HomaStatus two(IllegalStateException ex) {
            return HomaStatus.ABORTED;
        }
    }
}
