// The protos this package ships (generated/proto, copied by `make spec`), loaded at run
// time with @grpc/proto-loader: the service's contract, and google.rpc's Status and error
// details, with which a server's INVALID_ARGUMENT names each field it refused.
//
// Loaded with keepCase, so field names are the proto's own (http_status, not httpStatus),
// and enums as their names (RUN_ERROR_CLASS_RATE_LIMITED): the shape every answer of this
// package has, whether the service or a bundle gave it.
'use strict';

const path = require('node:path');
const protoLoader = require('@grpc/proto-loader');
const { FACTS } = require('./facts');

const PROTO_DIR = path.join(__dirname, 'generated', 'proto');
const PROTO = path.join(PROTO_DIR, 'errorclass', 'v1', 'classifier.proto');
const GOOGLE_RPC = ['google/rpc/status.proto', 'google/rpc/error_details.proto'];
const LOADER_OPTIONS = {
  keepCase: true, // field names as in the proto
  enums: String, // RUN_ERROR_CLASS_RATE_LIMITED, not 3 (class_name and error_class both come back)
  longs: Number,
  defaults: true, // unset fields read as their zero values, like every other gRPC runtime
  oneofs: true,
};

const definitions = new Map();
function definition(protoPath = PROTO) {
  if (!definitions.has(protoPath)) definitions.set(protoPath, protoLoader.loadSync(protoPath, LOADER_OPTIONS));
  return definitions.get(protoPath);
}

let googleRpc;
function googleRpcDefinition() {
  if (!googleRpc) googleRpc = protoLoader.loadSync(GOOGLE_RPC, { ...LOADER_OPTIONS, includeDirs: [PROTO_DIR] });
  return googleRpc;
}

// An enum value's number (`RunErrorClass`, `RunEffect`, `UnknownReason`, ... of the
// service's package). With enums as strings, a number this copy of the proto does not name
// arrives as the number itself.
function enumNumber(enumName, value) {
  if (typeof value === 'number') return value;
  const found = enumValues(enumName).find((v) => v.name === value);
  return found ? found.number : undefined;
}

// An enum value's name by its number (the number itself when this proto does not name it).
function enumName(enumName, number) {
  const found = enumValues(enumName).find((v) => v.number === number);
  return found ? found.name : number;
}

function enumValues(enumName) {
  return definition()[`${FACTS.service.package}.${enumName}`].type.value;
}

const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

// The field violations of a gRPC error's google.rpc.Status (the `grpc-status-details-bin`
// trailer): each BadRequest detail's {field, description}. Empty when the error carries
// none, or carries something this cannot read (a status is read while handling a failure,
// so it never throws).
function badRequestViolations(err) {
  let status;
  try {
    const raw = err && err.metadata && typeof err.metadata.get === 'function' ? err.metadata.get('grpc-status-details-bin') : [];
    if (!raw.length || !Buffer.isBuffer(raw[0])) return [];
    const rpc = googleRpcDefinition();
    status = rpc['google.rpc.Status'].deserialize(raw[0]);
    const out = [];
    for (const detail of status.details) {
      if (detail.type_url !== BAD_REQUEST) continue;
      for (const v of rpc['google.rpc.BadRequest'].deserialize(detail.value).field_violations) {
        out.push({ field: v.field, description: v.description });
      }
    }
    return out;
  } catch {
    return [];
  }
}

module.exports = { PROTO, badRequestViolations, definition, enumName, enumNumber, googleRpcDefinition };
