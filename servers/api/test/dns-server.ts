import dns2 from 'dns2';

// A DNS server in the test process (dns2, UDP on 127.0.0.1): it answers the TXT records a test
// sets, NXDOMAIN for any other name. The server is told of it with SVC_DNS_SERVERS.

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for SVC_DNS_SERVERS or `createTxtResolver([address])`. */
  address: string;
  /** Sets the TXT records of `name` (each record one string); none removes the name. */
  setTxt(name: string, records?: string[]): void;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const { Packet } = dns2;
  const zone = new Map<string, string[]>();
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question?.name.toLowerCase().replace(/\.$/, '') ?? '';
      const records = zone.get(name);
      if (records === undefined) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
      } else if (question?.type === Packet.TYPE.TXT) {
        for (const data of records) {
          response.answers.push(Packet.createResourceFromQuestion(question, { ttl: 1, data } as never));
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = (addresses as { udp?: { port: number } }).udp?.port ?? server.addresses().udp?.port;
  if (port === undefined) throw new Error('the DNS server did not listen');
  return {
    address: `127.0.0.1:${port}`,
    setTxt(name, records) {
      const key = name.toLowerCase().replace(/\.$/, '');
      if (records === undefined) zone.delete(key);
      else zone.set(key, records);
    },
    close: async () => {
      await server.close();
    },
  };
}
