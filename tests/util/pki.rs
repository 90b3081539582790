//! Certificates a test makes for a TLS server it starts: a CA, a server
//! certificate for 127.0.0.1 signed by it (and an expired one), a client
//! certificate, and a second CA that signed none of them. Files in PEM,
//! in a directory the test owns.

use std::path::PathBuf;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

pub struct Pki {
    dir: tempfile::TempDir,
}

fn ca_params(name: &str) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params
}

fn leaf_params(name: &str, usages: Vec<ExtendedKeyUsagePurpose>) -> CertificateParams {
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = usages;
    params
}

impl Pki {
    /// `ca.pem`; `server.pem`/`server.key`, `expired.pem`/`expired.key`
    /// (expired in 2020), `client.pem`/`client.key`, all signed by it;
    /// `other-ca.pem`, which signed nothing here.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: String| std::fs::write(dir.path().join(name), text).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let ca = ca_params("resetctl test CA").self_signed(&ca_key).unwrap();
        write("ca.pem", ca.pem());
        let issuer = Issuer::new(ca_params("resetctl test CA"), ca_key);
        use ExtendedKeyUsagePurpose::{ClientAuth, ServerAuth};
        // The server's certificate is a client's too: cluster nodes show
        // it to each other on the TLS cluster bus.
        let leaves = [
            ("server", vec![ServerAuth, ClientAuth], false),
            ("expired", vec![ServerAuth], true),
            ("client", vec![ClientAuth], false),
        ];
        for (name, usages, expired) in leaves {
            let key = KeyPair::generate().unwrap();
            let mut params = leaf_params(name, usages);
            if expired {
                params.not_before = rcgen::date_time_ymd(2019, 1, 1);
                params.not_after = rcgen::date_time_ymd(2020, 1, 1);
            }
            let cert = params.signed_by(&key, &issuer).unwrap();
            write(&format!("{name}.pem"), cert.pem());
            write(&format!("{name}.key"), key.serialize_pem());
        }
        let other_key = KeyPair::generate().unwrap();
        let other = ca_params("another CA").self_signed(&other_key).unwrap();
        write("other-ca.pem", other.pem());
        Pki { dir }
    }

    /// The file `name` (`ca.pem`, `server.key`, …).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The file `name`, as text for a flag.
    pub fn arg(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}
