/**
 * Declarative Homa clients: interfaces annotated
 * {@link io.homa.spring.client.HomaExchange @HomaExchange} become injectable beans.
 */
@NullMarked
package io.homa.spring.client;

import org.jspecify.annotations.NullMarked;
