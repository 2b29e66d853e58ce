# Chen's test NLL per frame, from his rnn_music code (gru_layers.py
# decoder_layer, gru_model.py build_model, eval_music_santa.py
# calc_negLoglike) transliterated to numpy, with his saved parameters on
# his .mat file: an independent check of main.go's forward pass of his GRU.
# Usage: chen_ref.py NPZDIR jsb|piano, with METASGMCMC_DATA set.
import os, sys
import numpy as np, scipy.io
src, name = sys.argv[1], sys.argv[2]
mat = {'jsb': 'JSB_Chorales.mat', 'piano': 'Piano_midi.mat'}[name]
z = np.load(os.path.join(src, name + '_santa_r.npz'))
p = {k: z[k] for k in z.files}
te = scipy.io.loadmat(os.path.join(os.environ['METASGMCMC_DATA'], 'music', mat))['testdata'][0]
n_h = 200
def cost(x):
    x = x.astype(np.float64)
    h = np.tanh(p['decoder_gru_b0'])
    hs = [h]
    sb = x @ p['decoder_gru_W'] + p['decoder_gru_b']
    sbx = x @ p['decoder_gru_Wx'] + p['decoder_gru_bx']
    for t in range(len(x) - 1):
        pre = h @ p['decoder_gru_U'] + sb[t]
        r = 1 / (1 + np.exp(-pre[:n_h])); u = 1 / (1 + np.exp(-pre[n_h:]))
        hc = np.tanh((h @ p['decoder_gru_Ux']) * r + sbx[t])
        h = u * h + (1 - u) * hc
        hs.append(h)
    a = np.array(hs) @ p['Vhid'] + p['bhid']
    # binary cross-entropy of sigmoid(a) against x, written stably
    return np.sum(np.logaddexp(0, a) - x * a) / len(x)
tot = sum(cost(x) * len(x) for x in te); n = sum(len(x) for x in te)
print(name, 'numpy forward of his GRU: %.9f (frames %d, %d sequences); his saved test_negll %.9f' % (tot / n, n, len(te), z['test_negll']))
