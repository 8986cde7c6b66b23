/** homa-grpc's implementation: the wire format and the plumbing of calls. Not API. */
@NullMarked
package io.homa.grpc.internal;

import org.jspecify.annotations.NullMarked;
