/**
 * Actuator support: the {@code homa} health indicator.
 */
@NullMarked
package io.homa.spring.actuate;

import org.jspecify.annotations.NullMarked;
