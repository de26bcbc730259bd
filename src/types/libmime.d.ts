// The one method of libmime (nodemailer's and mailparser's MIME codec) the service calls; the package ships no types.
declare module 'libmime' {
  const libmime: {
    /** Decodes the RFC 2047 encoded words of a header value (`=?UTF-8?Q?Zo=C3=AB?=` -> `Zoë`). */
    decodeWords(value: string): string;
  };
  export default libmime;
}
