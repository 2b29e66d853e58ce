# Extracts Chen et al.'s saved GRU parameters (SET_santa_r.npz) into raw
# little-endian float64 files SET_NAME.f64 and an index SET_meta.json (his
# saved NLL histories), which main.go reads. Usage: extract.py NPZDIR OUTDIR SET...
import json, os, sys
import numpy as np
src, out = sys.argv[1], sys.argv[2]
for name in sys.argv[3:]:
    z = np.load(os.path.join(src, name + '_santa_r.npz'), allow_pickle=True)
    meta = {}
    for k in z.files:
        a = np.asarray(z[k], dtype='<f8')
        if k in ('history_negll', 'train_negll', 'valid_negll', 'test_negll'):
            meta[k] = a.tolist()
            continue
        np.ascontiguousarray(a).tofile(os.path.join(out, '%s_%s.f64' % (name, k)))  # row-major
        meta.setdefault('shapes', {})[k] = list(a.shape)
    json.dump(meta, open(os.path.join(out, name + '_meta.json'), 'w'), indent=1)
