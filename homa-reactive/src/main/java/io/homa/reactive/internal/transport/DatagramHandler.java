package io.homa.reactive.internal.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The channel's only handler: datagrams into the engine driver, never an exception into the pipeline. */
final class DatagramHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(DatagramHandler.class);

    /** Set on the event loop by the bind listener, before the channel becomes active. */
    private @Nullable NettyHomaTransport transport;

    void attach(NettyHomaTransport bound) {
        this.transport = bound;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            NettyHomaTransport t = transport;
            if (t != null && msg instanceof DatagramPacket packet) {
                t.driver().onDatagram(packet);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        NettyHomaTransport t = transport;
        if (t != null) {
            t.driver().drive();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        NettyHomaTransport t = transport;
        if (t != null && ctx.channel().isWritable()) {
            t.driver().drive();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        NettyHomaTransport t = transport;
        if (t != null) {
            t.onChannelInactive();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        NettyHomaTransport t = transport;
        if (t != null) {
            t.driver().onIoError(cause);
        } else {
            log.debug("Homa transport on {}: I/O error (ignored)", ctx.channel().localAddress(), cause);
        }
    }
}
