window.rulesdslPreviews("burning_wheel/index.html", {});
