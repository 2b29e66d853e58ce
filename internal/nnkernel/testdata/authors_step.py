# authors_step.py: the expected values of TestAuthorsStepMatchesTheirCode,
# from one training-mode step of the authors' code (github.com/WenboGong/
# MetaSGMCMC at c7b6bdd, BNN_MNIST/BNN_Q_D.py unmodified, and the update lines
# of BNN_MNIST/BNN_Sampler.py's NN_SGHMC.parallel_sample with mode_train=True,
# lines 274-315, transcribed below) on two chains of three coordinates, in
# float64. Run from a checkout of their BNN_MNIST directory with PyTorch:
#   python3 authors_step.py
# (their modules import IPython and torchvision; stubs for both suffice).
import sys, types
import numpy as np
import torch
for name in ["IPython", "IPython.core", "IPython.core.debugger"]:
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["IPython.core.debugger"].Tracer = lambda *a, **k: (lambda *a, **k: None)
for name in ["torchvision", "torchvision.datasets", "torchvision.transforms"]:
    sys.modules.setdefault(name, types.ModuleType(name))
torch.set_default_dtype(torch.float64)
sys.path.insert(0, ".")
from BNN_Model_def import MLP, Positive_MLP
from BNN_Q_D import parallel_Q_eff, parallel_D_eff, parallel_Gamma_eff

K, dim, N = 2, 3, 1000.
eps, alpha = 0.01, 30.   # η and const_D = α
clampQ, dmax = 0.1, 60.
rng = np.random.RandomState(6)
Q_MLP, D_MLP = MLP(input_dim=2, hidden=3, out_size=1), Positive_MLP(input_dim=3, hidden=3, out_size=1)
for net in (Q_MLP, D_MLP):
    for p in net.features.parameters():
        p.data = torch.tensor(rng.uniform(-1, 1, p.shape))
theta = torch.tensor(rng.normal(size=(K, dim)))
p = torch.tensor(rng.normal(size=(K, dim)))
u = torch.tensor([[-0.4], [0.3]])              # log-joint / N per chain
gradU = torch.tensor(rng.normal(size=(K, dim)) * 300)   # ∇Ũ
xi = torch.tensor(rng.normal(size=(K, dim)))

Q = parallel_Q_eff(dim, Q_MLP, None, K, clamp=clampQ, dim_pen=1., dim_pen_p=1., sqrt=False)
D = parallel_D_eff(dim, D_MLP, None, K, clamp_min=0., clamp_max=dmax, dim_pen=1., dim_pen_p=1., dim_pen_g=1., sqrt=False)
G = parallel_Gamma_eff(dim, Q_NN=Q_MLP, D_NN=D_MLP)
Q_out, gQpos, gQmom, _ = Q.forward(p, theta, u, gradU / N, const=0., flag_graph=True)
D_out, gDmom, gDQ = D.forward(p, theta, u, gradU / N, Q_out, gQmom, const=alpha, flag_graph=True)
tau1, tau2 = G.forward(p, theta, gQmom, gQpos, gDmom, gDQ, alpha, Q_out, clamp_min=D.clamp_min)
noise = torch.sqrt(2. * eps * D_out) * xi
p1 = p - eps * Q_out * gradU - eps * D_out * p + eps * tau2 + noise                     # :279
Qd, gQpos, gQmom, _ = Q.forward(p1, theta, u, gradU / N, const=0., flag_graph=True)       # :288
tau1, tau2 = G.forward(p1, theta, gQmom, gQpos, gDmom, gDQ, alpha, Qd, clamp_min=D.clamp_min)  # :305
theta1 = theta + eps * Q_out * p1 + eps * tau1                                            # :315

def go(name, x):
    x = np.asarray(x.detach() if torch.is_tensor(x) else x, dtype=float).ravel()
    print("\t%s = []float64{%s}" % (name, ", ".join(repr(float(v)) for v in x)))
for name, net in (("q", Q_MLP), ("d", D_MLP)):
    ps = list(net.features.parameters())
    go(name + "W0", ps[0].T); go(name + "B0", ps[1]); go(name + "W1", ps[2].T); go(name + "B1", ps[3])
go("theta", theta); go("p", p); go("u", u.repeat(1, dim)); go("gradU", gradU); go("xi", xi)
go("wantP", p1); go("wantTheta", theta1)
print("\t// Q_f clamped on %d, D_f clamped on %d of %d coordinates" % (
    int((Q_out.abs() >= clampQ).sum()), int((D_out >= dmax).sum()), K * dim))
