class Serialize:
    def __init__(self, data): self.data = data
    def __repr__(self): return f"<Serialize: {self.data!r}>"
    def __eq__(self, other): return isinstance(other, Serialize) and other.data == self.data
    def __hash__(self): return hash(repr(self.data))
