"""GradBench `gmm`: the log-posterior of a Gaussian mixture model (ADBench's GMM).

Parameters per component k: the log-weight alpha[k], the mean mu[k], and the
inverse covariance factor Q_k = diag(exp(q[k])) + L_k, where L_k is strictly
lower triangular with its entries in l[k] column by column (for column i,
the rows i + 1 .. d - 1). The objective is

    sum_i logsumexp_k(alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2)
    - n logsumexp(alpha) - n d log(2 pi) / 2 + log Wishart prior(Q_k; gamma, m).
"""

import math

from adgen import Array, f64, zeros


def log_gamma_half(t: int) -> float:
    """lgamma(t / 2) for an integer t >= 1, by the recurrences of Gamma."""
    s = 0.0
    if t % 2 == 0:
        for i in range(1, t // 2):
            s += math.log(i)
    else:
        s = 0.5 * math.log(math.pi)
        for i in range(1, (t - 1) // 2 + 1):
            s += math.log(i - 0.5)
    return s


def log_gamma_distrib(a2: int, p: int) -> float:
    """log of the multivariate gamma function Gamma_p(a2 / 2)."""
    r = 0.25 * p * (p - 1) * math.log(math.pi)
    for j in range(1, p + 1):
        r += log_gamma_half(a2 + 1 - j)
    return r


def gmm_objective(alpha: Array[f64], mu: Array[f64, 2], q: Array[f64, 2], l: Array[f64, 2],
                  x: Array[f64, 2], gamma: float, m: int) -> float:
    k = mu.shape[0]
    d = mu.shape[1]
    n = x.shape[0]
    ltri = l.shape[1]
    qdiag = zeros((k, d))
    sum_qs = zeros(k)
    main_term = zeros(k)

    # exp(q), sum(q) and the Frobenius part of the Wishart prior, per component
    wish = 0.0
    for ik in range(k):
        sq = 0.0
        fro = 0.0
        for j in range(d):
            qd = math.exp(q[ik, j])
            qdiag[ik, j] = qd
            sq += q[ik, j]
            fro += qd * qd
        for j in range(ltri):
            fro += l[ik, j] * l[ik, j]
        sum_qs[ik] = sq
        wish += 0.5 * gamma * gamma * fro - m * sq

    slse = 0.0
    for ix in range(n):
        for ik in range(k):
            # qx = Q_k (x_ix - mu_k), one row j at a time: the diagonal, then
            # row j of L (columns 0 .. j - 1). Column i of L (rows i + 1 .. d - 1)
            # starts at l[ik, i (2 d - i - 1) / 2], so entry (j, i) is at
            # j - 1 for i = 0 and d - 2 - i further on for each next column. (The
            # adjoint of the i loop runs in the forward order and counts `at` the
            # same way: nothing is taped for it. By rows, nothing is stored in
            # the inner loop, where the column-wise qx[j] += ... stalled on its
            # own stores: the objective takes half the time.)
            sqn = 0.0
            for j in range(d):
                qxj = qdiag[ik, j] * (x[ix, j] - mu[ik, j])
                at = j - 1
                for i in range(j):
                    qxj += l[ik, at] * (x[ix, i] - mu[ik, i])
                    at += d - 2 - i
                sqn += qxj * qxj
            main_term[ik] = alpha[ik] + sum_qs[ik] - 0.5 * sqn
        mx = main_term[0]
        for ik in range(1, k):
            mx = max(mx, main_term[ik])
        se = 0.0
        for ik in range(k):
            se += math.exp(main_term[ik] - mx)
        slse += math.log(se) + mx

    amax = alpha[0]
    for ik in range(1, k):
        amax = max(amax, alpha[ik])
    asum = 0.0
    for ik in range(k):
        asum += math.exp(alpha[ik] - amax)
    lse_alpha = math.log(asum) + amax

    n_w = d + m + 1
    c_w = n_w * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_distrib(n_w, d)
    constant = -n * d * 0.5 * math.log(2.0 * math.pi)
    return constant + slse - n * lse_alpha - wish + k * c_w
