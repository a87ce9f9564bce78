/**
 * `copyWith(base, changes)` is `{ ...base, ...changes }` for the paths every transaction or request
 * takes, written as `Object.assign` into a fresh object.
 *
 * Node 20's V8 (11.3) allocates an object literal that spreads an object and then gets more
 * properties (`{ ...a, b }`, `{ ...a, ...b }`, and `{ ...a }` given a property afterwards) in the old
 * generation, not the young one: each minor GC then keeps everything the copy references alive
 * until the next full GC, however briefly the copy itself lived. `Object.assign` into `{}` makes
 * the same object (the same own properties in the same order) in the young generation
 * (docs/pipeline.md, "Object spreads in the old generation"; scripts/patch-deps.mjs rewrites the
 * same pattern in @ethereumjs/evm).
 */
export function copyWith<T extends object, U extends object>(base: T, changes: U): Omit<T, keyof U> & U {
  // an own `__proto__` key (parsed JSON can hold one) would set the copy's prototype under
  // Object.assign; the spread keeps it an own property, so such a copy is made by the spread
  if (Object.hasOwn(base, '__proto__') || Object.hasOwn(changes, '__proto__')) return { ...base, ...changes }
  return Object.assign({}, base, changes)
}
