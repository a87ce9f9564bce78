/**
 * A TCP relay on loopback that a test can sever and restore: what a network partition looks like
 * to a node (its peer's address stops answering and every open connection drops), without root
 * or network namespaces. Bytes are relayed as they are, so TLS runs end to end through it.
 */
import { createConnection, createServer, type Socket } from 'node:net'

export interface TcpProxy {
  /** the port the proxy listens on (127.0.0.1) */
  readonly port: number
  /** drops every relayed connection and refuses new ones until heal() */
  cut(): void
  heal(): void
  isCut(): boolean
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>()
  let severed = false
  const track = (socket: Socket): void => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
    // a reset from either side only ends that pair; nothing is thrown into the test
    socket.on('error', () => socket.destroy())
  }
  const server = createServer((client) => {
    track(client)
    if (severed) {
      client.destroy()
      return
    }
    const upstream = createConnection(target)
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.once('close', () => upstream.destroy())
    upstream.once('close', () => client.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      severed = true
      // a reset, not a polite close: the far side learns at once that the link is gone
      for (const socket of open) socket.resetAndDestroy()
    },
    heal() {
      severed = false
    },
    isCut: () => severed,
    async close() {
      for (const socket of open) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/**
 * One proxy per ordered pair of nodes (dialler → listener), and every node's hosts.toml rewritten
 * so that it reaches each peer through its own proxy; its own line (where it listens) stays. Cutting
 * a node severs every proxy it dials through or is dialled through.
 */
export interface Partitioner {
  cut(hostname: string): void
  heal(hostname: string): void
  close(): Promise<void>
}

export async function partitionable(
  nodes: readonly { hostname: string; p2pPort: number }[],
  writeHosts: (hostname: string, lines: string[]) => void,
): Promise<Partitioner> {
  const proxies = new Map<string, TcpProxy>()
  const key = (from: string, to: string) => `${from}>${to}`
  for (const from of nodes) {
    const lines: string[] = []
    for (const to of nodes) {
      if (to.hostname === from.hostname) {
        lines.push(`${to.hostname} 127.0.0.1:${to.p2pPort}`)
        continue
      }
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: to.p2pPort })
      proxies.set(key(from.hostname, to.hostname), proxy)
      lines.push(`${to.hostname} 127.0.0.1:${proxy.port}`)
    }
    writeHosts(from.hostname, lines)
  }
  const isolated = new Set<string>()
  // a link is down while either of its ends is cut off, so cutting two nodes and healing one works
  const apply = (): void => {
    for (const [pair, proxy] of proxies) {
      const down = pair.split('>').some((hostname) => isolated.has(hostname))
      if (down && !proxy.isCut()) proxy.cut()
      else if (!down && proxy.isCut()) proxy.heal()
    }
  }
  return {
    cut: (hostname) => {
      isolated.add(hostname)
      apply()
    },
    heal: (hostname) => {
      isolated.delete(hostname)
      apply()
    },
    close: async () => void (await Promise.all([...proxies.values()].map((proxy) => proxy.close()))),
  }
}
