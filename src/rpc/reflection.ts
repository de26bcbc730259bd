import {
  create,
  createRegistry,
  fromBinary,
  toBinary,
  type DescFile,
  type DescService,
  type MessageInitShape,
  type Registry,
} from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { AppError } from '../errors.js';
import {
  ServerReflection,
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from '../gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from '../gen/grpc/reflection/v1alpha/reflection_pb.js';

/**
 * gRPC server reflection, so that grpcurl, Postman, Kreya and the like call the service with no proto file: they
 * list the services, then fetch the files declaring what they call. Answered from the file descriptors
 * protoc-gen-es embedded in src/gen, so it can only ever describe the schema this build serves. grpc.reflection.v1,
 * and the same from the same code as grpc.reflection.v1alpha for the clients that know only the older name (its
 * messages are v1's, field for field).
 *
 * No credentials: the schema it reveals is the public one, served unauthenticated as /v1/mail/openapi.json already
 * (the admin API's included). grpcurl sends its -H headers on reflection calls too, so none are refused either.
 * What an anonymous stream may cost is bounded: each request message is at most REFLECTION_READ_MAX_BYTES (a
 * symbol or file name; connect-es refuses a larger one unread), a stream answers at most
 * REFLECTION_MAX_REQUESTS requests, and every answer is a descriptor already in memory.
 */

/** A request names one symbol or file (the longest of ours is under 100 characters): 4 KiB is ample. */
export const REFLECTION_READ_MAX_BYTES = 4 * 1024;

/** grpcurl's `describe` of every service makes about 10 requests on a stream; a stream past this is refused. */
export const REFLECTION_MAX_REQUESTS = 100;

// grpc::StatusCode values carried in ErrorResponse.error_code.
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;

/**
 * The reflection services over `services` (the public and admin APIs), themselves listed too: grpcurl lists them
 * and describes them with the others. Files are answered with every file they import, transitively, as the
 * protocol asks, but each file at most once on a stream (clients keep what they were sent).
 */
export function createReflection(services: readonly DescService[]): {
  v1: ServiceImpl<typeof ServerReflection>;
  v1alpha: ServiceImpl<typeof v1alpha.ServerReflection>;
} {
  const index = indexSchema([...services, ServerReflection, v1alpha.ServerReflection]);
  return {
    v1: { serverReflectionInfo: (requests) => reflectionStream(index, requests) },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        const asV1 = async function* () {
          for await (const r of requests)
            yield fromBinary(ServerReflectionRequestSchema, toBinary(v1alpha.ServerReflectionRequestSchema, r));
        };
        for await (const a of reflectionStream(index, asV1()))
          yield fromBinary(v1alpha.ServerReflectionResponseSchema, toBinary(ServerReflectionResponseSchema, a));
      },
    },
  };
}

async function* reflectionStream(
  index: SchemaIndex,
  requests: AsyncIterable<ServerReflectionRequest>,
): AsyncGenerator<ServerReflectionResponse> {
  const sent = new Set<string>();
  let count = 0;
  for await (const request of requests) {
    if (++count > REFLECTION_MAX_REQUESTS) {
      throw new AppError(
        'payload_too_large',
        `A reflection stream answers at most ${REFLECTION_MAX_REQUESTS} requests; open another stream`,
      );
    }
    yield answer(index, request, sent);
  }
}

interface SchemaIndex {
  services: string[];
  registry: Registry;
  /** Every file by its proto name (mail/v1/types.proto, google/protobuf/struct.proto). */
  files: Map<string, DescFile>;
  /** Every fully-qualified name a file declares (types, fields, oneofs, enum values, services, methods). */
  symbols: Map<string, DescFile>;
}

function indexSchema(services: readonly DescService[]): SchemaIndex {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(visit);
  };
  services.forEach((s) => visit(s.file));
  const registry = createRegistry(...files.values());
  const symbols = new Map<string, DescFile>();
  for (const desc of registry) {
    symbols.set(desc.typeName, desc.file);
    switch (desc.kind) {
      case 'message':
        for (const f of desc.fields) symbols.set(`${desc.typeName}.${f.name}`, desc.file);
        for (const o of desc.oneofs) symbols.set(`${desc.typeName}.${o.name}`, desc.file);
        break;
      case 'enum': {
        // An enum value's full name is a sibling of its enum's (C++ scoping), as protoc resolves it.
        const scope = desc.typeName.slice(0, desc.typeName.length - desc.name.length);
        for (const v of desc.values) symbols.set(`${scope}${v.name}`, desc.file);
        break;
      }
      case 'service':
        for (const m of desc.methods) symbols.set(`${desc.typeName}.${m.name}`, desc.file);
        break;
      case 'extension':
        break;
    }
  }
  return { services: services.map((s) => s.typeName).sort(), registry, files, symbols };
}

function answer(index: SchemaIndex, request: ServerReflectionRequest, sent: Set<string>): ServerReflectionResponse {
  const reply = (messageResponse: MessageInitShape<typeof ServerReflectionResponseSchema>['messageResponse']) =>
    create(ServerReflectionResponseSchema, { validHost: request.host, originalRequest: request, messageResponse });
  const error = (errorCode: number, errorMessage: string) =>
    reply({ case: 'errorResponse', value: { errorCode, errorMessage } });
  const files = (file: DescFile | undefined, notFound: string) =>
    file
      ? reply({ case: 'fileDescriptorResponse', value: { fileDescriptorProto: withImports(file, sent) } })
      : error(NOT_FOUND, notFound);

  const req = request.messageRequest;
  switch (req.case) {
    case 'listServices':
      return reply({
        case: 'listServicesResponse',
        value: { service: index.services.map((name) => ({ name })) },
      });
    case 'fileByFilename':
      return files(index.files.get(req.value), `file not found: ${req.value}`);
    case 'fileContainingSymbol':
      return files(index.symbols.get(req.value), `symbol not found: ${req.value}`);
    case 'fileContainingExtension': {
      const extendee = index.registry.getMessage(req.value.containingType);
      const ext = extendee && index.registry.getExtensionFor(extendee, req.value.extensionNumber);
      return files(ext?.file, `extension ${req.value.extensionNumber} of ${req.value.containingType} not found`);
    }
    case 'allExtensionNumbersOfType': {
      if (!index.registry.getMessage(req.value)) return error(NOT_FOUND, `type not found: ${req.value}`);
      const numbers: number[] = [];
      for (const desc of index.registry)
        if (desc.kind === 'extension' && desc.extendee.typeName === req.value) numbers.push(desc.number);
      return reply({
        case: 'allExtensionNumbersResponse',
        value: { baseTypeName: req.value, extensionNumber: numbers },
      });
    }
    default:
      return error(INVALID_ARGUMENT, 'the request names none of the reflection requests');
  }
}

/** The file itself, then each file it imports (transitively) that this stream has not been sent yet. */
function withImports(file: DescFile, sent: Set<string>): Uint8Array[] {
  const out = [toBinary(FileDescriptorProtoSchema, file.proto)];
  sent.add(file.proto.name);
  const queue = [...file.dependencies];
  for (let dep = queue.shift(); dep; dep = queue.shift()) {
    if (sent.has(dep.proto.name)) continue;
    sent.add(dep.proto.name);
    out.push(toBinary(FileDescriptorProtoSchema, dep.proto));
    queue.push(...dep.dependencies);
  }
  return out;
}
