package io.homa.spring.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.spring.HomaAutoConfiguration;
import io.homa.spring.client.scan.GreeterClient;
import io.homa.spring.client.scan.NotAClient;
import io.homa.spring.client.scan.ScanApplication;
import io.homa.spring.client.scan.sub.CalcClient;
import io.homa.spring.client.scan.sub.SubConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

/** Which {@code @HomaExchange} interfaces become beans. */
class HomaClientRegistrationTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1");

    @Test
    void shouldRegisterEveryClientInTheApplicationPackages() {
        this.contextRunner.withUserConfiguration(ScanApplication.class).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(GreeterClient.class).hasSingleBean(CalcClient.class)
                    .doesNotHaveBean(NotAClient.class);
            assertThat(context).hasBean(GreeterClient.class.getName()).hasBean(CalcClient.class.getName());
            assertThat(context.getBean(GreeterClient.class).toString()).contains(GreeterClient.class.getName())
                    .contains("'Greeter'");
        });
    }

    @Test
    void shouldRegisterNothingWithoutApplicationPackages() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(GreeterClient.class).doesNotHaveBean(CalcClient.class);
        });
    }

    @Test
    void shouldRegisterOnlyTheListedClients() {
        this.contextRunner.withUserConfiguration(ScanApplication.class, OnlyGreeter.class).run((context) -> {
            assertThat(context).hasSingleBean(GreeterClient.class).doesNotHaveBean(CalcClient.class);
        });
    }

    @Test
    void shouldScanOnlyTheGivenPackages() {
        this.contextRunner.withUserConfiguration(ScanApplication.class, OnlyCalcPackage.class).run((context) -> {
            assertThat(context).hasSingleBean(CalcClient.class).doesNotHaveBean(GreeterClient.class);
        });
    }

    @Test
    void shouldScanThePackageOfTheAnnotatedClassByDefault() {
        this.contextRunner.withUserConfiguration(ScanApplication.class, SubConfiguration.class).run((context) -> {
            assertThat(context).hasSingleBean(CalcClient.class).doesNotHaveBean(GreeterClient.class);
        });
    }

    @Test
    void shouldImportClientsRepeatedlyAndOnce() {
        this.contextRunner.withUserConfiguration(ImportBoth.class, OnlyGreeter.class).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(GreeterClient.class).hasSingleBean(CalcClient.class);
        });
    }

    @Test
    void shouldFailStartUpOnATypeThatIsNotAClient() {
        this.contextRunner.withUserConfiguration(ImportNotAClient.class).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .hasMessageContaining(NotAClient.class.getName())
                    .hasMessageContaining("must be an interface annotated @HomaExchange");
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableHomaClients(clients = GreeterClient.class)
    static class OnlyGreeter {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableHomaClients(basePackageClasses = CalcClient.class)
    static class OnlyCalcPackage {
    }

    @Configuration(proxyBeanMethods = false)
    @ImportHomaClients(GreeterClient.class)
    @ImportHomaClients(CalcClient.class)
    static class ImportBoth {
    }

    @Configuration(proxyBeanMethods = false)
    @ImportHomaClients(NotAClient.class)
    static class ImportNotAClient {
    }
}
