"""A dense layer: y = tanh(W x + b) written into y, returns 0.5 * |y|^2."""

import numpy as np

from adgen import Array, f64


def layer(W: Array[f64, 2], b: Array[f64], x: Array[f64], y: Array[f64]) -> f64:
    loss = 0.0
    for i in range(W.shape[0]):
        acc = b[i]
        for j in range(W.shape[1]):
            acc += W[i, j] * x[j]
        y[i] = np.tanh(acc)
        loss += 0.5 * y[i] * y[i]
    return loss
