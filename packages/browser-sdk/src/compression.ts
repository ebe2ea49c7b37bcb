/**
 * zlib-wrapped deflate of `text` (what `X-Service-Encoding: json+deflate` means): the browser's
 * native `CompressionStream('deflate')`, or `pako` loaded on demand where it is missing (older
 * Safari), so pako never weighs on browsers that do not need it.
 *
 * @example
 * ```ts
 * const body = await deflate(JSON.stringify(chunk));
 * ```
 */
export async function deflate(text: string): Promise<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  if (typeof CompressionStream === 'undefined') {
    const pako = await import('pako');
    return pako.deflate(bytes);
  }
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
