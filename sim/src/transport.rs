//! Connections that a handler can cut, for the fault "execute, then drop the connection
//! without answering".

use axum::extract::connect_info::Connected;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// A TCP stream whose owner can make every further read return EOF and every write fail, so
/// the response never reaches the client.
pub struct KillableStream {
    inner: TcpStream,
    kill: Arc<AtomicBool>,
}

impl AsyncRead for KillableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.kill.load(Ordering::SeqCst) {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.kill.load(Ordering::SeqCst) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "dropped by fault injection",
            )));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The listener that hands out [`KillableStream`]s.
pub struct KillableListener {
    pub(crate) inner: TcpListener,
}

/// The remote address plus the switch that cuts this connection.
#[derive(Clone)]
pub struct Conn {
    pub remote: SocketAddr,
    kill: Arc<AtomicBool>,
}

impl Conn {
    /// Cuts the connection: the answer being written never reaches the client.
    pub fn kill(&self) {
        self.kill.store(true, Ordering::SeqCst);
    }
}

impl axum::serve::Listener for KillableListener {
    type Io = KillableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((s, a)) => {
                    let _ = s.set_nodelay(true);
                    return (
                        KillableStream { inner: s, kill: Arc::new(AtomicBool::new(false)) },
                        a,
                    );
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

impl Connected<axum::serve::IncomingStream<'_, KillableListener>> for Conn {
    fn connect_info(stream: axum::serve::IncomingStream<'_, KillableListener>) -> Self {
        Conn { remote: *stream.remote_addr(), kill: stream.io().kill.clone() }
    }
}
