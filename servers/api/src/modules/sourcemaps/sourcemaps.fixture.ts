import { randomUUID } from 'node:crypto';
import vm from 'node:vm';
import { build } from 'esbuild';

// Real bundles for the tests: a small TypeScript module minified by esbuild with an external
// source map, a debug id injected as the TC39 proposal has it (the bundle's `//# debugId=`
// comment and the map's `debugId`), and the stack it throws when run.

export const CHECKOUT_SOURCE = `interface Cart {
  items?: string[];
}

function validate(cart: Cart): number {
  if (cart.items === undefined) {
    throw new TypeError('cart has no items');
  }
  return cart.items.length;
}

export function checkout(cart: Cart): number {
  const count = validate(cart);
  return count * 2;
}
`;

/** The 1-based line of the `throw` in {@link CHECKOUT_SOURCE}, and of the call to validate. */
export const THROW_LINE = 7;
export const CALL_LINE = 13;

export interface BuiltBundle {
  name: string;
  code: string;
  map: string;
  debugId?: string;
}

/**
 * Minifies the checkout module into `name` (an IIFE assigning `app`); `padding` lines of code
 * before it make another build whose positions differ; `debugId` injects one.
 */
export async function buildCheckout(options: {
  name: string;
  padding?: number;
  debugId?: boolean;
}): Promise<BuiltBundle> {
  const padding = Array.from(
    { length: options.padding ?? 0 },
    (_, index) => `export const pad${index} = ${index};`,
  ).join('\n');
  const result = await build({
    stdin: {
      contents: padding === '' ? CHECKOUT_SOURCE : `${padding}\n${CHECKOUT_SOURCE}`,
      loader: 'ts',
      sourcefile: 'src/checkout.ts',
    },
    bundle: true,
    minify: true,
    format: 'iife',
    globalName: 'app',
    sourcemap: 'external',
    sourcesContent: true,
    outfile: options.name,
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles.find((file) => file.path.endsWith('.js'))?.text as string;
  const map = result.outputFiles.find((file) => file.path.endsWith('.map'))?.text as string;
  if (options.debugId !== true) return { name: options.name, code, map };
  const debugId = randomUUID();
  return {
    name: options.name,
    code: `${code}//# debugId=${debugId}\n`,
    map: JSON.stringify({ ...JSON.parse(map), debugId }),
    debugId,
  };
}

/** Runs the bundle as the script at `url` and returns the stack of its error. */
export function stackOf(bundle: BuiltBundle, url: string): string {
  const context = vm.createContext({});
  new vm.Script(bundle.code, { filename: url }).runInContext(context);
  try {
    (context as { app: { checkout(cart: object): number } }).app.checkout({});
  } catch (error) {
    return (error as Error).stack as string;
  }
  throw new Error('checkout did not throw');
}
