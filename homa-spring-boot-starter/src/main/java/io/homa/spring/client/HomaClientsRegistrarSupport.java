package io.homa.spring.client;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.ResourceLoaderAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

/** What both client registrars are given by the container before they register clients. */
abstract class HomaClientsRegistrarSupport implements ImportBeanDefinitionRegistrar, BeanFactoryAware,
        EnvironmentAware, ResourceLoaderAware {

    protected BeanFactory beanFactory;

    protected Environment environment;

    protected ResourceLoader resourceLoader;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void setResourceLoader(ResourceLoader resourceLoader) {
        this.resourceLoader = resourceLoader;
    }
}
