def get_address_host(addr):
    loc = addr.split("://")[-1]
    return loc.rsplit(":", 1)[0]
