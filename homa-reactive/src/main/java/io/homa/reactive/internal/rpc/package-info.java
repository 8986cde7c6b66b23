/**
 * The RPC layer's plumbing: the envelope and frame codecs. Not API: nothing here is used by
 * applications, and it changes without notice.
 */
@NullMarked
package io.homa.reactive.internal.rpc;

import org.jspecify.annotations.NullMarked;
