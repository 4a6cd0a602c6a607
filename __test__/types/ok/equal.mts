// Type-level assertion helpers shared by the examples.

/** `true` when X and Y are the same type (not merely mutually assignable). */
export type Equal<X, Y> = (<G>() => G extends X ? 1 : 2) extends <G>() => G extends Y ? 1 : 2 ? true : false;

/** Compiles only when given `true`. */
export type Assert<T extends true> = T;

/** Compiles only when `actual` has exactly type `Expected` (checked by the caller's annotation). */
export function expectType<Expected>(actual: Expected): Expected {
  return actual;
}
