// Where a Client's bundle comes from and what it trusts: a bundle file to start from, the
// serving bundle fetched with GetBundle, each verified with the trusted keys before it is
// used, and the one in use kept when a newer one is refused (docs/bundles.md).
//
// Why a refusal never unloads anything: a bundle is what answers when the service cannot, so
// a bad file or a tampered download must cost the update, never the fallback. A refusal is
// counted and the last one kept, for the operator to see.
'use strict';

const fs = require('node:fs');
const { Bundle, BundleError, verifyBundle } = require('./bundle');

// Trusted keys as given: PEM text, a Buffer or a KeyObject each, or the path of a PEM file
// (a string that holds no PEM header), read now.
function readKeys(keys) {
  return keys.map((key) => {
    if (typeof key !== 'string' || key.includes('-----BEGIN')) return key;
    try {
      return fs.readFileSync(key);
    } catch (err) {
      throw new BundleError('invalid_key', `${key}: ${err.code || err.message}`);
    }
  });
}

class BundleSource {
  // `trustedKeys`: see readKeys; `allowUnsigned`: without trusted keys, use a bundle
  // unverified (else every bundle is refused: `unsigned`, or `unknown_key` when signed).
  constructor({ trustedKeys = [], allowUnsigned = false } = {}) {
    this.trustedKeys = readKeys(trustedKeys);
    this.allowUnsigned = Boolean(allowUnsigned);
    this.bundle = null;
    this.refusals = 0;
    this.lastRefusal = null; // the last BundleError
  }

  // A bundle from its bytes and its signatures' (null: none), verified as configured, or a
  // BundleError (not recorded: the caller says whether it refuses a start or an update).
  verified(data, signatures) {
    if (this.trustedKeys.length) return Bundle.fromBytes(data, { signatures, trustedKeys: this.trustedKeys });
    if (this.allowUnsigned) return Bundle.fromBytes(data);
    try {
      verifyBundle(data, signatures, []); // nothing trusted: unsigned, unknown_key or malformed_signatures
    } catch (err) {
      throw new BundleError(err.code, `${err.message.slice(err.code.length + 2)} (no trusted keys are configured, ` +
        'and unsigned bundles are not allowed: give trustedKeys, or allowUnsigned to use a bundle unverified)');
    }
    throw new BundleError('unknown_key', 'no trusted keys are configured');
  }

  // The bytes of a bundle file and of its signatures file (`signatures`, else FILE.sig.json
  // when it exists; null when not).
  static readFiles(file, signatures) {
    const read = (f, what) => {
      try {
        return fs.readFileSync(f);
      } catch (err) {
        throw new BundleError('invalid_bundle', `${what} ${f}: ${err.code || err.message}`);
      }
    };
    const data = read(file, 'the bundle file');
    const sigfile = signatures || `${file}.sig.json`;
    const sig = signatures || fs.existsSync(sigfile) ? read(sigfile, 'the signatures file') : null;
    return [data, sig];
  }

  // Swap in a bundle from bytes, or record the refusal and rethrow it (the one in use stays).
  offer(data, signatures) {
    let bundle;
    try {
      bundle = this.verified(data, signatures);
    } catch (err) {
      if (err instanceof BundleError) this.refused(err);
      throw err;
    }
    this.bundle = bundle;
    return bundle;
  }

  refused(err) {
    this.refusals++;
    this.lastRefusal = err;
  }
}

module.exports = { BundleSource, readKeys };
