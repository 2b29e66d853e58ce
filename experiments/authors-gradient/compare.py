# compare.py: runs the authors' own MNIST meta-training unroll
# (BNN_MNIST/BNN_Sampler.py NN_SGHMC.parallel_sample with mode_train=True,
# BNN_Q_D.py and BNN_training_func.py's grad_ELBO and modify_grad, from
# github.com/WenboGong/MetaSGMCMC) on the inputs that cmd/dumpunroll wrote
# (θ₀, the minibatch order, the noise ξ_t, the networks), in float64, and
# compares the chains' path and the meta-gradient with ours. See README.md.
#
#   python3 compare.py --authors PATH/TO/MetaSGMCMC/BNN_MNIST --dump DIR --meta SAMPLER.json [--patch LIST]
#
# --patch changes their step where it differs from the sampler's own (for a
# dump made with dumpunroll --exact-step), LIST a comma-separated subset of
# position (the position update with Q_f at (θ_t, p_{t+1}), not at p_t),
# sign (the chain rule's sign of ∂Q_f/∂θ) and gate (∂f_D/∂p dropped where
# D_f's clamp binds), or all. Needs PyTorch and NumPy; their modules import
# IPython and torchvision, which are stubbed here.
import argparse, gzip, io, contextlib, json, os, sys, time, types
import numpy as np
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--authors", required=True, help="their BNN_MNIST directory")
ap.add_argument("--dump", required=True, help="the directory cmd/dumpunroll wrote")
ap.add_argument("--meta", required=True, help="the sampler file the dump's networks came from")
ap.add_argument("--data", default=os.path.join(os.environ.get("METASGMCMC_DATA", "data"), "mnist"))
ap.add_argument("--patch", default="", help="position, sign, gate, or all, comma-separated")
args = ap.parse_args()

for name in ["IPython", "IPython.core", "IPython.core.debugger", "torchvision", "torchvision.datasets", "torchvision.transforms"]:
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["IPython.core.debugger"].Tracer = lambda *a, **k: (lambda *a, **k: None)
torch.set_default_dtype(torch.float64)
_sdt = torch.set_default_tensor_type
torch.set_default_tensor_type = lambda t: _sdt("torch.DoubleTensor")  # their modules ask for CUDA floats
torch.Tensor.cuda = lambda self, *a, **k: self
torch.set_num_threads(1)
sys.path.insert(0, args.authors)


def load(name, patches):
    """imports their module NAME with the (old, new) text replacements applied"""
    path = os.path.join(args.authors, name + ".py")
    src = open(path).read()
    for old, new in patches:
        assert src.count(old) == 1, (name, old)
        src = src.replace(old, new)
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


patches = {"position": ("BNN_Sampler", "state_pos=state_pos+eps*Q_out*state_mom+eps*tau_out1 #chain x dim",
                         "state_pos=state_pos+eps*Q_out_dash*state_mom+eps*tau_out1 #chain x dim"),
           "sign": ("BNN_Q_D", "grad_Q_pos=torch.squeeze(grad_Q[:,:,0:1])*grad_U/self.dim_pen ## num_chain x dim",
                    "grad_Q_pos=-torch.squeeze(grad_Q[:,:,0:1])*grad_U/self.dim_pen ## num_chain x dim"),
           "gate": ("BNN_Q_D", "            grad_D_Q=grad(out_D,Q_out,torch.ones(Q_out.data.shape),allow_unused=True,create_graph=flag_graph)[0]\n",
                    "            grad_D_Q=grad(out_D,Q_out,torch.ones(Q_out.data.shape),allow_unused=True,create_graph=flag_graph)[0]\n"
                    "            _raw=((Q_out**2)*const+torch.squeeze(out)).detach()\n"
                    "            grad_D_mom=grad_D_mom*((_raw>self.clamp_min)&(_raw<self.clamp_max)).double()\n")}
chosen = sorted(patches) if args.patch == "all" else [p for p in args.patch.split(",") if p]
for p in chosen:
    assert p in patches, "--patch: %r is not one of position, sign, gate, all" % p
qd_patches = [patches[p][1:] for p in chosen if patches[p][0] == "BNN_Q_D"]
sampler_patches = [patches[p][1:] for p in chosen if patches[p][0] == "BNN_Sampler"]
QD = load("BNN_Q_D", qd_patches)
S = load("BNN_Sampler", sampler_patches)
from BNN_Model_def import BNN, MLP, Positive_MLP
from BNN_training_func import modify_grad

u = json.load(open(os.path.join(args.dump, "unroll.json")))
steps, K, dim, N = u["steps"], u["chains"], u["dim"], 60000.
read = lambda name, rows: np.fromfile(os.path.join(args.dump, name)).reshape(rows, K, dim)
theta0, thetas, noise = read("theta0.f64", 1)[0], read("theta.f64", steps), read("noise.f64", steps)


def idx(path):
    with gzip.open(path) as f:
        b = f.read()
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(b[3])]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * b[3]).reshape(dims)


X = torch.tensor((idx(os.path.join(args.data, "train-images-idx3-ubyte.gz")).reshape(-1, 784) / 255.0 - 0.1307) / 0.3081)
Y = torch.tensor(idx(os.path.join(args.data, "train-labels-idx1-ubyte.gz")).astype(np.int64))
assert len(X) == N, "the NT set-up trains on all 60,000 MNIST images"
perm, B = np.array(u["perm"]), u["batch"]
loader = [(X[perm[B * s:B * (s + 1)]], Y[perm[B * s:B * (s + 1)]]) for s in range(steps + 1)]

Q_MLP, D_MLP = MLP(input_dim=2, hidden=10, out_size=1), Positive_MLP(input_dim=3, hidden=10, out_size=1)
cfg = json.load(open(args.meta))["config"]
for net, spec in ((Q_MLP, cfg["f_q"]), (D_MLP, cfg["f_d"])):
    sd = {}
    for l, (w, b) in enumerate(zip(spec["w"], spec["b"])):
        sd["features.%d.weight" % (2 * l)] = torch.tensor(np.array(w).reshape(-1, len(b)).T.copy())
        sd["features.%d.bias" % (2 * l)] = torch.tensor(np.array(b))
    net.load_state_dict(sd, strict=False)  # their MLPs carry an unused out_func layer

bnn = BNN(dim=784, hidden=20, layer_num=2, dim_out=10, act_func='ReLU')
assert bnn.get_total_dim() == dim
seen = []  # θ_t at every sampler step, where their sampler evaluates the energy
_grad_BNN = bnn.grad_BNN
def grad_BNN(X, y, weight, data_N, coef=1., sigma=1., flag_retain=False):
    if not flag_retain:
        seen.append(weight.detach().numpy().copy())
    return _grad_BNN(X, y, weight, data_N, coef=coef, sigma=sigma, flag_retain=flag_retain)
bnn.grad_BNN = grad_BNN
queue = [torch.tensor(noise[s]) for s in range(steps)]  # their sampler draws ξ_t with torch.randn(chains, dim)
_randn = torch.randn
def randn(*shape, **kw):
    if tuple(shape) == (K, dim) and queue:
        return queue.pop(0)
    return _randn(*shape, **kw)
torch.randn = randn

eps = float(np.sqrt(0.007 / N))
assert abs(eps - u["step_size"]) < 1e-15, (eps, u["step_size"])
Q = QD.parallel_Q_eff(dim, Q_MLP, bnn, K, clamp=5, dim_pen=1., dim_pen_p=1., sqrt=False)
D = QD.parallel_D_eff(dim, D_MLP, bnn, K, clamp_min=0., clamp_max=1000, dim_pen=1., dim_pen_p=1., dim_pen_g=1., sqrt=False)
G = QD.parallel_Gamma_eff(dim, Q_NN=Q_MLP, D_NN=D_MLP)
sampler = S.NN_SGHMC(dim, bnn, D, Q, G)
t0 = time.time()
with contextlib.redirect_stdout(io.StringIO()):  # their sampler prints its progress
    _, _, _, _, _, A, _ = sampler.parallel_sample(
        torch.tensor(theta0, requires_grad=True), torch.zeros(K, dim, requires_grad=True), torch.Tensor([0]), loader,
        data_N=N, sigma=1., num_chain=K, total_step=2, limit_step=steps + 1, eps=eps, eps2=eps,
        TBPTT_step=u["window"], sample_interval=u["cross_every"], mom_resample=2000000, mom_scale=1.,
        mode_train=True, const_Q=0., const_D=float(0.01 / eps), test_loader=None)
modify_grad(A, Q_MLP, D_MLP)
print("their code: %d steps, %d loss evaluations, %.0f s; ours: AuthorsStep %s%s" % (
    len(seen), len(A), time.time() - t0, u["authors_step"], "; theirs patched: " + ", ".join(chosen) if chosen else ""))
print("step  max |θ_ours − θ_theirs|  max |θ|")
for s in sorted(set([0, 1, 2, 5, 10, steps - 1]) & set(range(steps))):
    print("%4d  %22.3g  %7.3g" % (s, np.abs(seen[s] - thetas[s]).max(), np.abs(thetas[s]).max()))
theirs = []
for net in (Q_MLP, D_MLP):
    ps = list(net.features.parameters())
    theirs += [ps[0].grad.numpy().T.ravel(), ps[1].grad.numpy(), ps[2].grad.numpy().T.ravel(), ps[3].grad.numpy()]
print("tensor   |ours|       |theirs|     relative difference")
for name, a, b in zip(["f_Q W0", "f_Q b0", "f_Q W1", "f_Q b1", "f_D W0", "f_D b0", "f_D W1", "f_D b1"], u["grad"], theirs):
    a = np.array(a)
    print("%-7s  %-11.5g  %-11.5g  %.2g" % (name, np.linalg.norm(a), np.linalg.norm(b), np.linalg.norm(a - b) / np.linalg.norm(b)))
