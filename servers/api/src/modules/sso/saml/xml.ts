import { createRequire } from 'node:module';

// The XML parser and XPath of node-saml's own tree (@xmldom/xmldom, xpath). They are loaded
// without their type declarations, which pull the DOM library into the whole program (and with it
// the browser's fetch types, wrong for Node); the few members used are typed here.

/** The part of a DOM node this module reads. */
export interface XmlNode {
  readonly nodeType: number;
  readonly localName: string | null;
  readonly namespaceURI: string | null;
  readonly textContent: string | null;
  readonly parentNode: XmlElement | null;
  readonly firstChild: XmlNode | null;
  readonly nextSibling: XmlNode | null;
  getAttribute?(name: string): string | null;
  hasAttribute?(name: string): boolean;
}

/** An element, with what the tests use to edit signed XML. */
export interface XmlElement extends XmlNode {
  textContent: string | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  setAttribute(name: string, value: string): void;
  getElementsByTagNameNS(namespace: string, localName: string): ArrayLike<XmlElement>;
  cloneNode(deep: boolean): XmlElement;
  appendChild(child: XmlNode): XmlNode;
  removeChild(child: XmlNode): XmlNode;
  insertBefore(child: XmlNode, reference: XmlNode | null): XmlNode;
  replaceChild(child: XmlNode, old: XmlNode): XmlNode;
}

export interface XmlDocument {
  readonly documentElement: XmlElement | null;
  createElementNS(namespace: string, qualifiedName: string): XmlElement;
  getElementsByTagNameNS(namespace: string, localName: string): ArrayLike<XmlElement>;
}

interface XmldomModule {
  DOMParser: new (options?: {
    errorHandler?: Record<'warning' | 'error' | 'fatalError', (message: string) => void>;
  }) => { parseFromString(xml: string, mimeType: string): XmlDocument | undefined };
  XMLSerializer: new () => { serializeToString(node: XmlNode | XmlDocument): string };
}

const require = createRequire(import.meta.url);
const xmldom = require('@xmldom/xmldom') as XmldomModule;
const xpath = require('xpath') as { select(expression: string, node: XmlNode | XmlDocument): unknown };

/** Parses `xml`, throwing `onError(message)` on any error or warning (xmldom otherwise recovers). */
export function parseXml(
  xml: string,
  onError: (message: string) => Error,
): XmlDocument & { documentElement: XmlElement } {
  const fail = (message: string) => {
    throw onError(message);
  };
  let document: XmlDocument | undefined;
  try {
    document = new xmldom.DOMParser({
      errorHandler: { warning: fail, error: fail, fatalError: fail },
    }).parseFromString(xml, 'text/xml');
  } catch (error) {
    throw onError(error instanceof Error ? error.message : String(error));
  }
  const root = document?.documentElement;
  if (!document || !root) throw onError('no root element');
  return Object.assign(document, { documentElement: root });
}

/** Serializes a document or node back to XML text. */
export function serializeXml(node: XmlNode | XmlDocument): string {
  return new xmldom.XMLSerializer().serializeToString(node);
}

/** The nodes `expression` selects from `node` (none when it selects a value). */
export function select(expression: string, node: XmlNode | XmlDocument): XmlNode[] {
  const result = xpath.select(expression, node);
  return Array.isArray(result) ? (result as XmlNode[]) : [];
}
