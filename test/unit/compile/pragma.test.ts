/** Choosing the solc release from a source's `pragma solidity` (src/compile/pragma.ts). */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { chooseRelease, releaseList, solidityPragmas } from '../../../src/compile/pragma.ts'
import { RpcError } from '../../../src/errors.ts'

const ALL = ['0.4.26', '0.5.17', '0.6.12', '0.7.6', '0.8.37']

const chosen = (source: string, releases = ALL): string => chooseRelease(source, releases)

function refused(source: string, releases = ALL): RpcError {
  try {
    chooseRelease(source, releases)
  } catch (error) {
    assert.instance(error, RpcError)
    assert.is((error as RpcError).code, -32000)
    return error as RpcError
  }
  throw new Error(`expected no release for ${source}`)
}

test('no pragma: 0.4.26, as Hyperchain examples expect', () => {
  assert.is(chosen('contract A { function f() {} }'), '0.4.26')
  assert.match(
    refused('contract A {}', ['0.8.37']).message,
    /has no `pragma solidity`, which compiles with solc 0.4.26, and this node has only solc 0.8.37/,
  )
})

test('the newest release each expression accepts', () => {
  assert.is(chosen('pragma solidity ^0.4.11;'), '0.4.26')
  assert.is(chosen('pragma solidity ^0.5.0;'), '0.5.17')
  assert.is(chosen('pragma solidity >=0.4.22 <0.6.0;'), '0.5.17')
  assert.is(chosen('pragma solidity ^0.6.0;'), '0.6.12')
  assert.is(chosen('pragma solidity >0.6.99 <0.8.0;'), '0.7.6')
  assert.is(chosen('pragma solidity ^0.8.0;'), '0.8.37')
  assert.is(chosen('pragma solidity >=0.5.0;'), '0.8.37')
  assert.is(chosen('pragma solidity ^0.4.0 || ^0.6.0;'), '0.6.12')
  assert.is(chosen('pragma solidity 0.7.6;'), '0.7.6')
  assert.is(chosen('pragma   solidity\n  ^0.5.2 ;'), '0.5.17', 'spaces and line breaks')
})

test('several pragmas must all hold; comments and strings do not count', () => {
  assert.is(chosen('pragma solidity >=0.5.0;\npragma solidity <0.7.0;'), '0.6.12')
  assert.is(chosen('// pragma solidity ^0.8.0;\ncontract A {}'), '0.4.26')
  assert.is(chosen('/* pragma solidity ^0.8.0; */ pragma solidity ^0.5.0;'), '0.5.17')
  assert.is(chosen('contract A { string s = "pragma solidity ^0.8.0;"; }'), '0.4.26')
  assert.equal(solidityPragmas('pragma experimental ABIEncoderV2;\npragma solidity ^0.6.0;'), ['^0.6.0'])
})

test('no release accepts it: -32000 naming the pragma and the releases', () => {
  assert.is(
    refused('pragma solidity ^0.9.0;').message,
    'no Solidity compiler of this node accepts `pragma solidity ^0.9.0;`: it has solc 0.8.37, 0.7.6, 0.6.12, 0.5.17 and 0.4.26 (the newest release of each of 0.4 to 0.8); change the pragma to accept one of them',
  )
  assert.match(refused('pragma solidity 0.8.19;').message, /accepts `pragma solidity 0.8.19;`/)
  assert.match(
    refused('pragma solidity ^0.5.0;\npragma solidity ^0.6.0;').message,
    /`pragma solidity \^0.5.0;` with `pragma solidity \^0.6.0;`/,
  )
  assert.match(refused('pragma solidity >=0.6.0;', ['0.4.26']).message, /it has solc 0.4.26 \(/)
  assert.match(refused('pragma solidity whatever;').message, /^compile failed: `pragma solidity whatever;` is not a version expression/)
})

test('releaseList: newest first, as a sentence', () => {
  assert.is(releaseList(['0.4.26']), '0.4.26')
  assert.is(releaseList(['0.4.26', '0.8.37']), '0.8.37 and 0.4.26')
})

test.run()
