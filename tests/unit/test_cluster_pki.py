"""Certificates: the API server's names, component identities, and a chain that verifies."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import NameOID

from winsuite.cluster.embedded import credentials
from winsuite.cluster.embedded import pki


def test_apiserver_cert_names_loopback_the_service_and_the_bridge_only_with_the_real_node(
    tmp_path: Path,
) -> None:
    simulated, real = tmp_path / "sim", tmp_path / "real"
    pki.ensure(simulated, "c", credentials.specs(real_node=False))
    pki.ensure(real, "c", credentials.specs(real_node=True))

    dns, ips = sans(real / "apiserver.crt")

    assert set(dns) >= {
        "localhost",
        "kubernetes",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
    }
    assert ips == ["127.0.0.1", "10.96.0.1", "10.244.0.1"]
    assert sans(simulated / "apiserver.crt")[1] == ["127.0.0.1", "10.96.0.1"]


def subject(path: Path) -> tuple[str, list[str]]:
    name = x509.load_pem_x509_certificate(path.read_bytes()).subject
    common = name.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    return str(common), [str(a.value) for a in name.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def test_components_authenticate_as_the_users_default_rbac_expects(tmp_path: Path) -> None:
    pki.ensure(tmp_path, "c", credentials.specs(real_node=True))

    assert subject(tmp_path / "admin.crt") == ("admin", ["system:masters"])
    assert subject(tmp_path / "kube-controller-manager.crt") == ("system:kube-controller-manager", [])
    assert subject(tmp_path / "kube-scheduler.crt") == ("system:kube-scheduler", [])
    assert subject(tmp_path / "kubelet.crt") == ("system:node:linux-0", ["system:nodes"])
    assert subject(tmp_path / "kube-proxy.crt") == ("system:kube-proxy", [])


def test_every_certificate_is_signed_by_the_cluster_ca(tmp_path: Path) -> None:
    pki.ensure(tmp_path, "c", credentials.specs(real_node=True))
    ca = x509.load_pem_x509_certificate((tmp_path / "ca.crt").read_bytes())

    for path in tmp_path.glob("*.crt"):
        x509.load_pem_x509_certificate(path.read_bytes()).verify_directly_issued_by(ca)


def test_existing_certificates_are_kept(tmp_path: Path) -> None:
    pki.ensure(tmp_path, "c", credentials.specs(real_node=False))
    before = (tmp_path / "apiserver.crt").read_bytes()

    pki.ensure(tmp_path, "c", credentials.specs(real_node=False))

    assert (tmp_path / "apiserver.crt").read_bytes() == before


def sans(cert_path: Path) -> tuple[list[str], list[str]]:
    """(DNS names, IP addresses) of a certificate."""
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return ext.get_values_for_type(x509.DNSName), [str(ip) for ip in ext.get_values_for_type(x509.IPAddress)]
