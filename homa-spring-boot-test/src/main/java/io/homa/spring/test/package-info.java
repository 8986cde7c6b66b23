/**
 * Test support for applications that use the Homa starter:
 * {@link io.homa.spring.test.AutoConfigureHomaTest @AutoConfigureHomaTest}.
 */
@NullMarked
package io.homa.spring.test;

import org.jspecify.annotations.NullMarked;
