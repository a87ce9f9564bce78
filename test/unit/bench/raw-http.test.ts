import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rawConnection } from '../../../bench/raw-http.ts'

/** an echo server that closes keep-alive connections idle for 100 ms (the node: a few seconds) */
async function echoServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => response.end(Buffer.concat(chunks)))
  })
  server.keepAliveTimeout = 100
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server }
}

test('replies arrive in order over one keep-alive connection', async () => {
  const { url, server } = await echoServer()
  const connection = await rawConnection(url)
  try {
    for (const body of ['{"a":1}', 'é'.repeat(10_000), '[]']) assert.is(await connection.post(body), body)
    assert.is(connection.closed, false)
  } finally {
    connection.close()
    server.close()
  }
})

// the bench hung for ever (no socket, no timer) when a lookup went out on a connection the node had closed while idle
test('a post on a connection the server closed while idle fails at once instead of waiting for ever', async () => {
  const { url, server } = await echoServer()
  const connection = await rawConnection(url)
  try {
    assert.is(await connection.post('1'), '1')
    // Node's server checks idle sockets about once a second
    for (let waited = 0; !connection.closed && waited < 3000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.is(connection.closed, true)
    const outcome = await Promise.race([
      connection.post('2').then(
        () => 'answered',
        (error: Error) => error.message,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 2 s'), 2000)),
    ])
    assert.is(outcome, 'connection closed by the node')
  } finally {
    connection.close()
    server.close()
  }
})

test.run()
