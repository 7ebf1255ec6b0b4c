import pickle
