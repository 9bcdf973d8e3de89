// A case input's raw bytes as a typed array: a view when aligned for the element type, else an aligned copy.

/** `bytes` as a typed array of `Type` (a view when aligned, else a copy). */
export function typedView<T>(bytes: Uint8Array, Type: { new (b: ArrayBufferLike, o: number, n: number): T; BYTES_PER_ELEMENT: number }): T {
  const aligned = bytes.byteOffset % Type.BYTES_PER_ELEMENT === 0 ? bytes : bytes.slice();
  return new Type(aligned.buffer, aligned.byteOffset, aligned.byteLength / Type.BYTES_PER_ELEMENT);
}
