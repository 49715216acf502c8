"""The cluster's certificates and keys (one CA signs every serving and client certificate)."""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.oid import NameOID

from winsuite.cluster.embedded.config import CLUSTER_DOMAIN
from winsuite.cluster.embedded.config import KUBERNETES_SERVICE_IP
from winsuite.cluster.embedded.config import LOOPBACK

VALIDITY = datetime.timedelta(days=365)
CA = "ca"
SERVICE_ACCOUNT_KEY = "sa.key"


@dataclasses.dataclass(frozen=True)
class CertSpec:
    """One certificate: file stem, subject, SANs and what it is used for."""

    name: str
    common_name: str
    organizations: tuple[str, ...] = ()
    dns: tuple[str, ...] = ()
    ips: tuple[str, ...] = ()
    server: bool = False
    client: bool = False


def apiserver_cert(extra_ips: tuple[str, ...]) -> CertSpec:
    """Serving cert: loopback, the `kubernetes` Service IP and names, plus where pods reach it (extra_ips)."""
    service = (
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        f"kubernetes.default.svc.{CLUSTER_DOMAIN}",
    )
    ips = (LOOPBACK, KUBERNETES_SERVICE_IP, *extra_ips)
    return CertSpec("apiserver", "kube-apiserver", dns=("localhost", *service), ips=ips, server=True)


def serving_cert(name: str, ips: tuple[str, ...] = (LOOPBACK,), dns: tuple[str, ...] = ()) -> CertSpec:
    return CertSpec(name, name, dns=("localhost", *dns), ips=ips, server=True)


def client_cert(name: str, user: str, *groups: str) -> CertSpec:
    return CertSpec(name, user, organizations=groups, client=True)


def _new_key() -> rsa.RSAPrivateKey:
    # RSA 2048, as kubeadm issues them.
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(path: Path, key: rsa.RSAPrivateKey) -> None:
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.write_bytes(pem)
    path.chmod(0o600)


def _builder(subject: x509.Name, issuer: x509.Name, public_key: rsa.RSAPublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))  # tolerate a little clock skew
        .not_valid_after(now + VALIDITY)
    )


def _load_ca(pki: Path, cluster: str) -> tuple[x509.Certificate, rsa.RSAPrivateKey]:
    cert_path, key_path = pki / f"{CA}.crt", pki / f"{CA}.key"
    if not cert_path.exists():
        key = _new_key()
        subject = _name(f"winsuite-{cluster}-ca")
        cert = (
            _builder(subject, subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            )
            .sign(key, hashes.SHA256())
        )
        _write_key(key_path, key)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    loaded = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    if not isinstance(loaded, rsa.RSAPrivateKey):
        raise ValueError(f"{key_path} is not an RSA key")
    return x509.load_pem_x509_certificate(cert_path.read_bytes()), loaded


def _issue(pki: Path, spec: CertSpec, ca: x509.Certificate, ca_key: rsa.RSAPrivateKey) -> None:
    key = _new_key()
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if spec.server else []) + (
        [ExtendedKeyUsageOID.CLIENT_AUTH] if spec.client else []
    )
    builder = (
        _builder(_name(spec.common_name, spec.organizations), ca.subject, key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True
        )
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    )
    names: list[x509.GeneralName] = [x509.DNSName(dns) for dns in spec.dns]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in spec.ips]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    _write_key(pki / f"{spec.name}.key", key)
    (pki / f"{spec.name}.crt").write_bytes(
        builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    )


def ensure(pki: Path, cluster: str, specs: list[CertSpec]) -> None:
    """Create the CA, the service-account key and each certificate that does not exist yet."""
    pki.mkdir(parents=True, exist_ok=True)
    ca, ca_key = _load_ca(pki, cluster)
    if not (pki / SERVICE_ACCOUNT_KEY).exists():
        _write_key(pki / SERVICE_ACCOUNT_KEY, _new_key())
    for spec in specs:
        if not (pki / f"{spec.name}.crt").exists():
            _issue(pki, spec, ca, ca_key)

