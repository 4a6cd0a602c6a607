// Same helpers as equal.mts, for the CommonJS example.
export type Equal<X, Y> = (<G>() => G extends X ? 1 : 2) extends <G>() => G extends Y ? 1 : 2 ? true : false;
export type Assert<T extends true> = T;
